#pragma once
/// The built-in `copy` kernel: dst = src with 16-byte vector loads and stores, UNROLL vectors per
/// thread in flight, optionally with the evict-first hint. It is the first "kernel" of `ktune
/// bench`, proving the whole measurement path (compile, worker, verify, time, count) before the
/// kernel templates exist, and the copy-bandwidth ceiling of `ktune devices --calibrate`.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/candidate.hpp"

namespace ktune::measure {

/// Parameters of the copy kernel.
struct CopyConfig {
  int unroll = 4;          ///< vectors per thread per iteration: 1, 2, 4 or 8
  int block = 256;         ///< threads per block, a multiple of 32 up to 1024
  int64_t grid = 0;        ///< blocks; 0 = enough for one pass over the data
  bool streaming = false;  ///< loads and stores with the evict-first (.cs) hint

  /// {"unroll":4,"block":256,"grid":0,"streaming":0}; missing keys keep their defaults; unknown keys
  /// or bad values throw ktune::Error(kBadInput) naming them.
  static CopyConfig from_json(const nlohmann::json& j);
  nlohmann::json to_json() const;
  /// Canonical config name, e.g. "copy.f32.u4.b256" (".g<grid>" when the grid is fixed, ".cs" when
  /// streaming).
  std::string name(DType dtype) const;
};

/// The CUDA source (the `nvrtc` test compiles it without a GPU).
const std::string& copy_kernel_source();
/// "ktune_copy<4,false>".
std::string copy_name_expression(const CopyConfig& config);

/// Throws ktune::Error(kBadInput) unless n * sizeof(dtype) is a positive multiple of 16 bytes.
void check_copy_size(uint64_t n, DType dtype);

/// A ready CandidateRequest copying `n` elements of `dtype` (buffers "src" random, "dst" poisoned,
/// check dst == src, bytes_moved = 2 n sizeof(dtype)), compiled with NVRTC for `arch`.
/// Throws ktune::Error(kBadInput) when n * sizeof(dtype) is not a multiple of 16 (the kernel's
/// vector width) or the config is invalid.
CandidateRequest make_copy_request(uint64_t n, DType dtype, const CopyConfig& config, const std::string& arch,
                                   const TimingOptions& timing, int device = 0);

}  // namespace ktune::measure
