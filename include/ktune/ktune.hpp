#pragma once
/// ktune's C++ dispatch runtime: launch the kernel config `ktune tune` found best for this GPU.
///
///     ktune::Runtime rt;                                    // opens $KTUNE_DB (read-only), device 0
///     rt.prepare_gemm(16, 4096, 4096, ktune::DType::kBF16, ktune::Layout::kNT);   // optional warm-up
///     rt.gemm(a, b, c, 16, 4096, 4096, ktune::DType::kBF16, ktune::Layout::kNT, stream);
///
/// The first call for a (shape, dtype, layout) looks the key up in the database (once; then in
/// memory), resolves a miss by the MissPolicy, loads the config's module (from the compile cache,
/// or compiles it with NVRTC) and allocates a split-K workspace. Later calls validate the arguments
/// (D8: dimensions, dtypes, the alignment the config requires) and launch on the caller's stream:
/// no allocation, no synchronisation, no compilation, so they are safe inside CUDA graph capture.
/// Every failure is a ktune::Error thrown before anything is launched. Thread-safe.
///
/// This header needs no CUDA headers: a stream is `CUstream_st*`, which is what `CUstream` (driver
/// API) and `cudaStream_t` (runtime API) are. Link ktune_tuner. docs/runtime.md has the details.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ktune/error.hpp"

struct CUstream_st;

namespace ktune {

/// A CUDA stream (CUstream / cudaStream_t); nullptr is the legacy default stream.
using Stream = CUstream_st*;

/// Element type of A, B and C (accumulation is f32).
enum class DType { kF32, kF16, kBF16 };
/// B's layout: kNT is [N,K] row-major (the nn.Linear weight), kNN is [K,N] row-major.
enum class Layout { kNT, kNN };

/// "f32", "f16", "bf16".
const char* to_string(DType dtype) noexcept;
/// "nt", "nn".
const char* to_string(Layout layout) noexcept;

/// What a shape that was never tuned gets.
enum class MissPolicy {
  kNearest,  ///< the winner of the nearest tuned shape (same dtype and layout), if it serves this
             ///< shape; else the kernel's default config
  kDefault,  ///< the kernel's default config
  kError,    ///< throw ktune::Error(kNotFound) ("tune now" is not supported here: run `ktune tune`)
};

struct RuntimeOptions {
  /// The database; "" resolves as `ktune` does ($KTUNE_DB, $XDG_CACHE_HOME/ktune/ktune.db,
  /// ~/.cache/ktune/ktune.db). A missing file is not an error: every shape is then a miss.
  std::string db_path;
  int device = 0;  ///< CUDA device ordinal; the runtime works in its primary context
  MissPolicy on_miss = MissPolicy::kNearest;
  /// Compile (NVRTC) a config whose cubin is not in the database's compile cache; false: throw.
  bool compile_on_miss = true;
};

/// How the runtime serves one (shape, dtype, layout).
struct GemmPlanInfo {
  enum class Source { kTuned, kNearest, kDefault };
  Source source = Source::kDefault;
  std::string config_name;          ///< canonical, e.g. gemm.bf16.nt.gemv.k256.sk4.w4.r2
  std::string tuned_shape;          ///< the shape it was tuned for ("" for the default config)
  double tuned_median_us = 0;       ///< from the sweep (0 for the default config)
  std::size_t launches = 0;         ///< kernels per gemm call (split-K: GEMM + reduction)
  std::size_t workspace_bytes = 0;  ///< f32 split-K workspace the config needs (0: none)
};

class Runtime {
 public:
  /// Opens the database and the device. Throws ktune::Error: kNoDevice without a driver or GPU,
  /// kBadInput for a file that is not a ktune database or a bad device ordinal.
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// C[M,N] = A[M,K] · B, with B [N,K] (kNT) or [K,N] (kNN), all row-major and contiguous, on
  /// `stream`. Asynchronous. A split-K config uses the runtime's own workspace for the shape, so
  /// two streams running the same split-K shape at once must pass their own (overload below).
  /// Throws ktune::Error(kBadInput) for a null pointer, a dimension outside [1, 2^31-1], or a
  /// pointer not aligned to its element size or to what the config requires; kRuntime when the
  /// launch fails; kNotFound on a miss with MissPolicy::kError; the first call of a key inside
  /// stream capture throws kBadInput (call prepare_gemm before capturing).
  void gemm(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, DType dtype,
            Layout layout, Stream stream);
  /// gemm() with a caller-provided workspace of at least `workspace_bytes`
  /// (GemmPlanInfo::workspace_bytes; may be null when that is 0).
  void gemm(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k, DType dtype,
            Layout layout, void* workspace, std::size_t workspace_bytes, Stream stream);

  /// Everything the first gemm() of the key does except launching: look-up, module load,
  /// workspace. Call it before capturing a CUDA graph. Returns how the key is served.
  GemmPlanInfo prepare_gemm(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout);

  /// Whether the key has been prepared (its plan is in memory): the hot-path lookup alone, without
  /// launching. A gemm() of a ready key allocates nothing and compiles nothing.
  bool ready(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) const noexcept;

  /// The GPU model the answers are for, e.g. "NVIDIA H200".
  const std::string& gpu_name() const;
  /// Tuned keys loaded from the database for this GPU.
  std::size_t tuned_keys() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
