#pragma once
/// The harness's own device code, compiled once per process with NVRTC for the current device:
/// the input fills (random_fill.hpp: counter-based random, range, pattern, and for integer buffers
/// the index sequence) and the output comparison (gpu_compare.hpp), one instantiation per DType and
/// IntType, and the read of the clean L2 flush (l2_flush.hpp). Loaded into the current
/// context on first use.

#include <cuda.h>

#include <string>

#include "core/buffer_fill.hpp"
#include "core/dtype.hpp"
#include "core/int_type.hpp"
#include "harness/module.hpp"

namespace ktune::measure {

/// The CUDA source (exposed for the `nvrtc` test that compiles it without a GPU).
const std::string& utility_kernels_source();
/// Name expressions of the source, e.g. "ktune_fill<0>" (the template argument is the DType index).
std::string fill_name_expression(DType dtype);
/// The fill kernel of `kind` for `dtype` ("ktune_fill_range<1>"); a floating-point buffer has no
/// sequence fill (throws ktune::Error(kBadInput)).
std::string fill_name_expression(DType dtype, BufferFill::Kind kind);
/// The fill kernel of `kind` for integers of `type` ("ktune_fill_int_sequence<int>"); integers have
/// no random fill (throws ktune::Error(kBadInput)).
std::string fill_name_expression(IntType type, BufferFill::Kind kind);
/// The exact comparison of integer outputs of `type`.
std::string compare_name_expression(IntType type);
std::string compare_name_expression(DType dtype);
/// An output of `dtype` against a reference of `ref_dtype` (the same dtype, or f32).
std::string compare_name_expression(DType dtype, DType ref_dtype);

/// Block size the compare kernel is written for (its shared-memory reduction).
inline constexpr unsigned kCompareBlock = 256;
/// The read kernel's launch (the clean L2 flush): a grid-stride loop of 16-byte loads.
inline constexpr unsigned kReadAllBlock = 256;
inline constexpr unsigned kReadAllBlocks = 1024;

class UtilityKernels {
 public:
  /// Compiles (NVRTC, for `arch`, e.g. "sm_90") and loads the module into the current context.
  explicit UtilityKernels(const std::string& arch);
  /// The random fill of `dtype`: `(ptr, n, seed, scale)`.
  CUfunction fill(DType dtype) const { return fill(dtype, BufferFill::Kind::kRandom); }
  /// The fill of `kind` (random, range, pattern) for `dtype`; random_fill.hpp launches them.
  CUfunction fill(DType dtype, BufferFill::Kind kind) const;
  /// The fill of `kind` (range, pattern, sequence) for integers of `type`.
  CUfunction fill(IntType type, BufferFill::Kind kind) const;
  /// The exact comparison of integer outputs of `type` (same per-block sums as compare()).
  CUfunction compare(IntType type) const;
  /// The compare kernel for an output of `dtype` against a reference of `ref_dtype` (same dtype or
  /// f32); throws ktune::Error(kBadInput) for any other pair.
  CUfunction compare(DType dtype, DType ref_dtype) const;
  CUfunction compare(DType dtype) const { return compare(dtype, dtype); }
  /// `ktune_read_all(const int4* p, unsigned long long n16, int* sink)`: reads n16 16-byte words and
  /// writes `sink` only for a word whose halves differ (never, for a buffer of equal bytes).
  CUfunction read_all() const { return read_all_; }

 private:
  harness::Module module_;
  CUfunction read_all_ = nullptr;
  CUfunction fills_[5][4] = {};      ///< [dtype][BufferFill::Kind]
  CUfunction int_fills_[3][4] = {};  ///< [IntType][BufferFill::Kind]
  CUfunction int_compare_[3] = {};
  CUfunction compare_[5][5] = {};  ///< [output dtype][reference dtype]
};

}  // namespace ktune::measure
