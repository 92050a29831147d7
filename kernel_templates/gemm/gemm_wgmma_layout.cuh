// Index arithmetic of gemm_wgmma.cu, free of CUDA intrinsics so the host can test it: where a
// 16-byte chunk of an operand tile lives in 128-byte-swizzled shared memory, the 64-bit wgmma
// matrix descriptors that describe those tiles, the accumulator fragment's coordinates and the
// grouped block order.
//
// Shared-memory tiles (BLOCK_K = 64 16-bit elements = 128 bytes), each stage 1024-byte aligned:
// - K-major (A [M,K], and B [N,K] for "nt"): row r of the tile (m or n) is 128 contiguous bytes at
//   r * 128; its 16-byte chunk c (k = 8c..8c+7) sits at chunk position c ^ (r % 8). Eight rows form
//   one 1024-byte swizzle atom; atoms follow each other (stride byte offset 1024).
// - MN-major (B [K,N] for "nn"): the tile is BLOCK_N / 64 column panels of 64 n (128 bytes) x 64 k;
//   panel p starts at p * 8192, row k of a panel at k * 128, chunk c (n = 64p + 8c..+7) at chunk
//   position c ^ (k % 8). Eight k rows form one atom (stride byte offset 1024 along k); panels are
//   8192 bytes apart (leading byte offset).
// Both are the canonical 128B-swizzle layouts of the PTX ISA (wgmma "Shared Memory Matrix Layout":
// Swizzle<3,4,3> on byte addresses, i.e. address bits [4,7) ^= bits [7,10)).
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KTUNE_WG_HD __host__ __device__ __forceinline__
#else
#define KTUNE_WG_HD inline
#endif

namespace ktune_wgmma {

constexpr int kBlockK = 64;         ///< k of one pipeline stage: one 128-byte swizzle row of 16-bit
constexpr int kRowBytes = 128;      ///< bytes of one swizzled row
constexpr int kAtomBytes = 1024;    ///< 8 rows: one 128B-swizzle atom
constexpr int kPanelBytes = 8192;   ///< an MN-major panel: 64 k rows of 128 bytes
constexpr int kWarpgroupRows = 64;  ///< rows of C one warpgroup computes (wgmma m64)
constexpr int kWarpgroupThreads = 128;

/// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a K-major tile.
KTUNE_WG_HD int kmajor_offset(int row, int chunk) { return row * kRowBytes + ((chunk ^ (row & 7)) << 4); }

/// Byte offset of 16-byte chunk `chunk` (0..BLOCK_N/8-1, n = 8 chunk..) of k row `k` (0..63) in an
/// MN-major tile.
KTUNE_WG_HD int mnmajor_offset(int k, int chunk) {
  return (chunk >> 3) * kPanelBytes + k * kRowBytes + (((chunk & 7) ^ (k & 7)) << 4);
}

/// A wgmma shared-memory matrix descriptor: start address, leading and stride byte offsets (each
/// encoded as (x & 0x3FFFF) >> 4 in 14 bits: bits 0-13, 16-29, 32-45), base offset 0 (bits 49-51:
/// every atom starts on a 1024-byte boundary) and swizzle mode 1 = 128B (bits 62-63).
KTUNE_WG_HD unsigned long long make_desc(unsigned smem_addr, unsigned leading_bytes, unsigned stride_bytes) {
  const unsigned long long start = (smem_addr & 0x3FFFFu) >> 4;
  const unsigned long long lead = (leading_bytes & 0x3FFFFu) >> 4;
  const unsigned long long stride = (stride_bytes & 0x3FFFFu) >> 4;
  return start | (lead << 16) | (stride << 32) | (1ull << 62);
}

/// Descriptor of the 16-wide k slice `kk` (0..3) of a K-major tile starting at `tile_addr`
/// (1024-byte aligned): 32 bytes further per slice, within the swizzled rows (the hardware applies
/// the XOR to the final address, so the advance stays inside each row's 128 bytes). The leading
/// byte offset is unused by swizzled K-major layouts ("assumed 1": 16 bytes).
KTUNE_WG_HD unsigned long long kmajor_desc(unsigned tile_addr, int kk) {
  return make_desc(tile_addr + static_cast<unsigned>(kk) * 32u, 16u, kAtomBytes);
}

/// Descriptor of k slice `kk` (0..3) of an MN-major tile: two whole atoms (16 k rows) per slice;
/// leading byte offset = the panel stride along n, stride byte offset = the atom stride along k.
KTUNE_WG_HD unsigned long long mnmajor_desc(unsigned tile_addr, int kk) {
  return make_desc(tile_addr + static_cast<unsigned>(kk) * 2u * kAtomBytes, kPanelBytes, kAtomBytes);
}

/// Row (0..63, within the warpgroup's 64 rows) of accumulator register `i` of thread `t` (0..127)
/// of an m64nNk16 f32 accumulator: warp t/32 owns rows 16 (t/32)..+15; registers 4j..4j+3 are the
/// 8-column block j: {0,1} at row lane/4, {2,3} at row lane/4 + 8.
KTUNE_WG_HD int acc_row(int t, int i) { return (t >> 5) * 16 + ((t & 31) >> 2) + ((i >> 1) & 1) * 8; }
/// Column (0..N-1) of accumulator register `i` of thread `t`: 8 (i/4) + 2 (lane % 4) + i % 2.
KTUNE_WG_HD int acc_col(int t, int i) { return (i >> 2) * 8 + (t & 3) * 2 + (i & 1); }

/// Grouped block order (L2 reuse): blocks walk GROUP block-rows of C column by column.
template <int GROUP>
KTUNE_WG_HD void block_coords(int pid, int tiles_m, int tiles_n, int& tm, int& tn) {
  const int per_group = GROUP * tiles_n;
  const int group = pid / per_group;
  const int first_m = group * GROUP;
  const int rows = tiles_m - first_m < GROUP ? tiles_m - first_m : GROUP;
  const int in_group = pid - group * per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

}  // namespace ktune_wgmma
