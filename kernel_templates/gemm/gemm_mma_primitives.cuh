// Tensor-core building blocks of gemm_mma.cu (sm_80+): ldmatrix, mma.sync m16n8k16 with f32
// accumulation, the XOR swizzle of shared-memory tiles and the grouped block order.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ktune_mma {

/// The two-element vector type of T (__half2, __nv_bfloat162); NVRTC has no <type_traits>.
template <typename T>
struct Pair;
template <>
struct Pair<__half> {
  using type = __half2;
};
template <>
struct Pair<__nv_bfloat16> {
  using type = __nv_bfloat162;
};

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Four 8x8 b16 matrices; lanes 8i..8i+7 give the row addresses of matrix i, which lands in r[i].
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
/// As ldmatrix_x4, each matrix transposed (the "nn" B operand: rows of k, columns of n).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

/// d += a * b for one 16x8x16 tile: a row-major 16x16, b column-major 16x8, d 16x8 f32.
template <typename T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1);
template <>
__device__ __forceinline__ void mma_16816<__nv_bfloat16>(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                                         unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma_16816<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                                  unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// A shared-memory tile of rows of CPR 16-byte chunks, stored without padding: chunk c of row r
/// sits at position c ^ xor_of(r). Any 8 consecutive rows read at one logical chunk (one ldmatrix
/// 8x8 matrix, or the rows a warp's cp.async writes) then hit 8 distinct 16-byte bank groups of the
/// 128-byte bank window: conflict-free. CPR must be a power of two (2..16).
template <int CPR>
struct Swizzle {
  static_assert(CPR >= 2 && (CPR & (CPR - 1)) == 0, "chunks per row: a power of two >= 2");
  static constexpr int kMask = CPR < 8 ? CPR : 8;                // chunk bits the XOR touches
  static constexpr int kRowsPerLine = CPR < 8 ? 8 / CPR : 1;     // rows sharing one 128-byte window
  __device__ __forceinline__ static int xor_of(int row) { return (row / kRowsPerLine) % kMask; }
  /// Byte offset of chunk `chunk` of row `row`.
  __device__ __forceinline__ static int offset(int row, int chunk) {
    return (row * CPR + (chunk ^ xor_of(row))) * 16;
  }
};

/// Grouped block order (L2 reuse): blocks walk GROUP block-rows of C column by column, so the
/// blocks resident at once share a few A row panels and B column panels. GROUP 1: row-major order.
template <int GROUP>
__device__ __forceinline__ void block_coords(int pid, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GROUP * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * GROUP;
  const int rows = min(tiles_m - first_m, GROUP);
  const int in_group = pid - group * per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

}  // namespace ktune_mma
