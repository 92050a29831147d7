// fp8_gemm / reference: the GPU reference that verifies every fp8_gemm candidate. Deliberately plain
// and independent of the template: e4m3 bytes decoded by arithmetic on their bit fields (not by the
// tensor cores, not by cuda_fp8.h), one thread per element of C, 16 x 16 tiles staged through shared
// memory, f32 accumulation in k order, scaled as (acc * a_scale) * b_scale, saturated to the largest
// finite bf16, f32 output. It is itself checked against the CPU float64 reference
// (kernel_templates/reference_fp8_gemm.cpp) in the gpu tests.

/// OCP E4M3FN: bias 7, 3 mantissa bits, no infinities, S.1111.111 is NaN (max finite 448).
__device__ __forceinline__ float ktune_decode_e4m3(unsigned char bits) {
  const unsigned e = (bits >> 3) & 15u;
  const unsigned m = bits & 7u;
  const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
  if (e == 15u && m == 7u) return __int_as_float(0x7fc00000);
  if (e == 0u) return sign * ldexpf(static_cast<float>(m), -9);  // subnormal: m * 2^(1 - 7 - 3)
  return sign * ldexpf(static_cast<float>(m | 8u), static_cast<int>(e) - 10);
}

template <bool ROWCOL>
__global__ void __launch_bounds__(256)
    ktune_fp8_gemm_reference(const unsigned char* __restrict__ A, const unsigned char* __restrict__ B,
                             const float* __restrict__ a_scale, const float* __restrict__ b_scale,
                             float* __restrict__ C_ref, int M, int N, int K) {
  constexpr int kTile = 16;
  constexpr float kBf16Max = 0x1.fep127f;  // 0x7F7F
  __shared__ float as[kTile][kTile + 1];  // as[m][k]
  __shared__ float bs[kTile][kTile + 1];  // bs[k][n]
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int m = blockIdx.y * kTile + ty;
  const int n = blockIdx.x * kTile + tx;
  const int bn = blockIdx.x * kTile + ty;  // B[n][k]: threads of a row read consecutive k
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    as[ty][tx] = (m < M && k0 + tx < K) ? ktune_decode_e4m3(A[static_cast<size_t>(m) * K + k0 + tx]) : 0.0f;
    bs[tx][ty] = (bn < N && k0 + tx < K) ? ktune_decode_e4m3(B[static_cast<size_t>(bn) * K + k0 + tx]) : 0.0f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(as[ty][kk], bs[kk][tx], acc);
    __syncthreads();
  }
  if (m < M && n < N) {
    const float v = ROWCOL ? (acc * a_scale[m]) * b_scale[n] : (acc * a_scale[0]) * b_scale[0];
    C_ref[static_cast<size_t>(m) * N + n] = v > kBf16Max ? kBf16Max : (v < -kBf16Max ? -kBf16Max : v);
  }
}
