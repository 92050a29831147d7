// Tiled matrix transpose: out (cols x rows) = in (rows x cols)^T, both row-major.
//
// A block of TILE x ROWS threads moves one TILE x TILE tile through shared memory (one padding
// column against bank conflicts): each thread reads TILE / ROWS elements of a row of the tile and
// writes TILE / ROWS elements of a column, so both global accesses are coalesced.
//
// Tuned by ktune from transpose.toml: TILE and ROWS are the tunables, T the element type.

template <int TILE, int ROWS, typename T>
__global__ void transpose(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  __shared__ T tile[TILE][TILE + 1];
  const int col0 = blockIdx.x * TILE;
  const int row0 = blockIdx.y * TILE;
  for (int j = threadIdx.y; j < TILE; j += ROWS) {
    const int r = row0 + j;
    const int c = col0 + threadIdx.x;
    if (r < rows && c < cols) tile[j][threadIdx.x] = in[static_cast<size_t>(r) * cols + c];
  }
  __syncthreads();
  for (int j = threadIdx.y; j < TILE; j += ROWS) {
    const int c = col0 + j;              // a row of `out`
    const int r = row0 + threadIdx.x;    // a column of `out`
    if (c < cols && r < rows) out[static_cast<size_t>(c) * rows + r] = tile[threadIdx.x][j];
  }
}

// The reference: one thread an element, no shared memory; obviously right, not fast.
template <typename T>
__global__ void transpose_reference(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(rows) * cols) return;
  const size_t r = i / cols;
  const size_t c = i % cols;
  out[c * rows + r] = in[i];
}
