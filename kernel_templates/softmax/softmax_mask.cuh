// The masks of softmax (softmax.cu, softmax_cluster.cu): the valid prefix n(r) of a row, the
// columns c < n(r) that the mask leaves (see softmax.cu's file comment for MASK 0 none, 1 causal,
// 2 padding). Plain C++, so the CPU emulation test can run it.
#pragma once

namespace ktune_softmax_detail {

/// The valid prefix n(r) of row `row` (softmax.cu's file comment); 0 for a row past the end.
template <int MASK>
__device__ __forceinline__ int valid_prefix(int row, int rows, int cols, const int* lengths, int row_offset) {
  if (row >= rows) return 0;
  if (MASK == 1) return min(cols, max(0, row + row_offset + 1));
  if (MASK == 2)
    return static_cast<int>(static_cast<unsigned>(lengths[row]) % (static_cast<unsigned>(cols) + 1u));
  return cols;
}

}  // namespace ktune_softmax_detail
