// Embedding gather: y[t, :] = table[ids[t], :] for each of `tokens` token ids, rows of `hidden`
// elements. `ids` is an index tensor of 32-bit integers (type = "i32" in gather.toml, filled with
// random row numbers in [0, vocab - 1]).
//
// A block of THREADS x ROWS threads copies ROWS token rows: each row's THREADS threads stride
// across it, so reads of the table row and writes of the output row are both coalesced.
//
// Tuned by ktune from gather.toml: THREADS and ROWS are the tunables, T the element type.

template <int THREADS, int ROWS, typename T>
__global__ void gather(const T* __restrict__ table, const int* __restrict__ ids, T* __restrict__ y, int tokens,
                       int hidden) {
  const int t = blockIdx.x * ROWS + threadIdx.y;
  if (t >= tokens) return;
  const T* src = table + static_cast<size_t>(ids[t]) * hidden;
  T* dst = y + static_cast<size_t>(t) * hidden;
  for (int c = threadIdx.x; c < hidden; c += THREADS) dst[c] = src[c];
}

// The reference: one thread an output element; obviously right, not fast.
template <typename T>
__global__ void gather_reference(const T* __restrict__ table, const int* __restrict__ ids, T* __restrict__ y,
                                 int tokens, int hidden) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(tokens) * hidden) return;
  const size_t t = i / hidden;
  const size_t c = i % hidden;
  y[i] = table[static_cast<size_t>(ids[t]) * hidden + c];
}
