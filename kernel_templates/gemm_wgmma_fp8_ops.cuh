// Hopper warpgroup MMA with e4m3 operands (sm_90a only) for fp8_gemm_wgmma.cu:
// wgmma.mma_async m64nNk32 .f32.e4m3.e4m3, both operands K-major in shared memory (fp8 wgmma has no
// transposed forms), f32 accumulators, D = A * B + D (scale-d 1; the caller zeroes D first).
// The accumulator fragment has the layout of the 16-bit m64nNk16 forms (gemm_wgmma_layout.cuh
// acc_row / acc_col), and a k32 slice of e4m3 is 32 bytes, as a k16 slice of 16-bit values, so the
// descriptors of gemm_wgmma_layout.cuh serve unchanged. Fence, commit and wait: gemm_wgmma_ops.cuh.
#pragma once

// The accumulator operands "+f"(d[i]) .. "+f"(d[i + 31]) of an asm statement.
#define KTUNE_WG8_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define KTUNE_WG8_D16(i) KTUNE_WG8_D4(i), KTUNE_WG8_D4(i + 4), KTUNE_WG8_D4(i + 8), KTUNE_WG8_D4(i + 12)
#define KTUNE_WG8_D32(i) KTUNE_WG8_D16(i), KTUNE_WG8_D16(i + 16)

namespace ktune_wgmma {

/// d (64 x N f32, the warpgroup's accumulator fragment) += A (64 x 32 e4m3) * B (32 x N e4m3).
template <int N>
struct Mma64xNk32E4m3;

template <>
struct Mma64xNk32E4m3<64> {
  __device__ __forceinline__ static void run(float (&d)[32], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1;\n}\n"
        : KTUNE_WG8_D32(0)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma64xNk32E4m3<128> {
  __device__ __forceinline__ static void run(float (&d)[64], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1;\n}\n"
        : KTUNE_WG8_D32(0), KTUNE_WG8_D32(32)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma64xNk32E4m3<256> {
  __device__ __forceinline__ static void run(float (&d)[128], unsigned long long a, unsigned long long b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,"
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,"
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1;\n}\n"
        : KTUNE_WG8_D32(0), KTUNE_WG8_D32(32), KTUNE_WG8_D32(64), KTUNE_WG8_D32(96)
        : "l"(a), "l"(b), "r"(1));
  }
};

}  // namespace ktune_wgmma

#undef KTUNE_WG8_D32
#undef KTUNE_WG8_D16
#undef KTUNE_WG8_D4
