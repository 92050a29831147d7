// LayerNorm of each row: y = (x - mean) / sqrt(var + eps) * gamma + beta, for a rows x hidden
// matrix x (row-major), gamma and beta of length hidden; statistics in f32.
//
// A group of THREADS threads normalises one row (three passes over it: mean, variance, output);
// a block holds ROWS groups. Each group reduces with warp shuffles, then through shared memory.
//
// Tuned by ktune from layernorm.toml: THREADS and ROWS are the tunables, T the element type.

template <int THREADS, int ROWS>
__device__ float group_sum(float v, float* scratch) {
  constexpr int kWarps = THREADS / 32;
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  const int group = threadIdx.x / THREADS;
  const int lane = threadIdx.x % THREADS;
  if (kWarps > 1) {
    if (lane % 32 == 0) scratch[group * kWarps + lane / 32] = v;
    __syncthreads();
    v = 0.0f;
    for (int w = 0; w < kWarps; ++w) v += scratch[group * kWarps + w];
    __syncthreads();  // scratch is reused by the next reduction
  }
  return v;
}

template <int THREADS, int ROWS, typename T>
__global__ void layernorm(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
                          T* __restrict__ y, int rows, int hidden, float eps) {
  __shared__ float scratch[ROWS * (THREADS / 32)];
  const int row = blockIdx.x * ROWS + threadIdx.x / THREADS;
  const int lane = threadIdx.x % THREADS;
  // A group past the last row still takes part in the block's barriers.
  const int len = row < rows ? hidden : 0;
  const T* xr = x + static_cast<size_t>(row < rows ? row : 0) * hidden;
  float sum = 0.0f;
  for (int i = lane; i < len; i += THREADS) sum += static_cast<float>(xr[i]);
  const float mean = group_sum<THREADS, ROWS>(sum, scratch) / hidden;
  float sq = 0.0f;
  for (int i = lane; i < len; i += THREADS) {
    const float d = static_cast<float>(xr[i]) - mean;
    sq += d * d;
  }
  const float rstd = rsqrtf(group_sum<THREADS, ROWS>(sq, scratch) / hidden + eps);
  T* yr = y + static_cast<size_t>(row) * hidden;
  for (int i = lane; i < len; i += THREADS) {
    const float v = (static_cast<float>(xr[i]) - mean) * rstd;
    yr[i] = static_cast<T>(v * static_cast<float>(gamma[i]) + static_cast<float>(beta[i]));
  }
}

// The reference: one thread a row, two plain passes; obviously right, not fast.
template <typename T>
__global__ void layernorm_reference(const T* __restrict__ x, const T* __restrict__ gamma,
                                    const T* __restrict__ beta, T* __restrict__ y, int rows, int hidden,
                                    float eps) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* xr = x + static_cast<size_t>(row) * hidden;
  float mean = 0.0f;
  for (int i = 0; i < hidden; ++i) mean += static_cast<float>(xr[i]);
  mean /= hidden;
  float var = 0.0f;
  for (int i = 0; i < hidden; ++i) {
    const float d = static_cast<float>(xr[i]) - mean;
    var += d * d;
  }
  const float rstd = 1.0f / sqrtf(var / hidden + eps);
  for (int i = 0; i < hidden; ++i) {
    const float v = (static_cast<float>(xr[i]) - mean) * rstd;
    y[static_cast<size_t>(row) * hidden + i] =
        static_cast<T>(v * static_cast<float>(gamma[i]) + static_cast<float>(beta[i]));
  }
}
