// The rotary embedding of rmsnorm_rope (rmsnorm_rope.cu, rmsnorm_rope_bulk.cu): a thread's VEC
// elements of each half of a head, rotated with the cos/sin row of the token's position. Plain C++
// (no inline asm), so the CPU emulation test can run it.
//
// cs is the row [D] f32: cos(p * theta_j) at [j], sin at [D/2 + j], j < D/2. NeoX (rotate-half)
// pairs element j with j + D/2 (angle j); GPT-J (interleaved) pairs 2j with 2j + 1 (angle j). For
// each pair (a, b) at angle j: a' = a cos - b sin, b' = b cos + a sin.
#pragma once

/// Loads N consecutive floats of the cos/sin table (16-byte vectors when `vector`: the table is
/// 16-byte aligned and, as every run here starts at a multiple of N, so is the run when N % 4 == 0;
/// pairs when N == 2). Reads nothing when `active` is false (the values are then unused).
template <int N>
__device__ __forceinline__ void load_f32_run(const float* p, bool vector, bool active, float* out) {
  if (vector && N % 4 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + i);
      out[i] = v.x;
      out[i + 1] = v.y;
      out[i + 2] = v.z;
      out[i + 3] = v.w;
    }
  } else if (vector && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) {
      const float2 v = *reinterpret_cast<const float2*>(p + i);
      out[i] = v.x;
      out[i + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) out[i] = active ? p[i] : 0.0f;
  }
}

/// Rotates x (the thread's VEC elements of the first half at offset `off`) and y (the same offset
/// in the second half) in place with the table row `cs` (global or shared memory). `vector`: the
/// row may be read in 16-byte vectors; `active`: the row is read at all (else zeros).
template <int HEAD_DIM, int VEC, bool GPTJ>
__device__ __forceinline__ void rope_rotate(const float* cs, int off, bool vector, bool active, float* x,
                                            float* y) {
  constexpr int kHalf = HEAD_DIM / 2;
  // The angles of this chunk: NeoX pairs j with j + D/2 at angle j (VEC angles from `off`);
  // GPT-J pairs 2j, 2j + 1 (VEC / 2 angles from off / 2 for the first half, (D/2 + off) / 2
  // for the second).
  float cosv[VEC];
  float sinv[VEC];
  const bool cv = vector;
  if (GPTJ) {
    load_f32_run<VEC / 2>(cs + off / 2, cv, active, cosv);
    load_f32_run<VEC / 2>(cs + (kHalf + off) / 2, cv, active, cosv + VEC / 2);
    load_f32_run<VEC / 2>(cs + kHalf + off / 2, cv, active, sinv);
    load_f32_run<VEC / 2>(cs + kHalf + (kHalf + off) / 2, cv, active, sinv + VEC / 2);
#pragma unroll
    for (int i = 0; i < VEC; i += 2) {
      const float ca = cosv[i / 2], sa = sinv[i / 2];
      const float cb = cosv[VEC / 2 + i / 2], sb = sinv[VEC / 2 + i / 2];
      const float a0 = x[i], a1 = x[i + 1];
      const float b0 = y[i], b1 = y[i + 1];
      x[i] = a0 * ca - a1 * sa;
      x[i + 1] = a1 * ca + a0 * sa;
      y[i] = b0 * cb - b1 * sb;
      y[i + 1] = b1 * cb + b0 * sb;
    }
  } else {
    load_f32_run<VEC>(cs + off, cv, active, cosv);
    load_f32_run<VEC>(cs + kHalf + off, cv, active, sinv);
#pragma unroll
    for (int i = 0; i < VEC; ++i) {
      const float x0 = x[i];
      const float x1 = y[i];
      x[i] = x0 * cosv[i] - x1 * sinv[i];
      y[i] = x1 * cosv[i] + x0 * sinv[i];
    }
  }
}
