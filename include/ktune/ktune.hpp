#pragma once
/// ktune's C++ dispatch runtime: launch the kernel config `ktune tune` found best for this GPU.
///
///     ktune::Runtime rt;                                    // opens $KTUNE_DB (read-only), device 0
///     rt.prepare_gemm(16, 4096, 4096, ktune::DType::kBF16, ktune::Layout::kNT);   // optional warm-up
///     rt.gemm(a, b, c, 16, 4096, 4096, ktune::DType::kBF16, ktune::Layout::kNT, stream);
///     rt.rmsnorm(x, w, y, rows, 4096, 1e-6f, ktune::DType::kBF16, stream);
///
/// Every operator (gemm, rmsnorm, rmsnorm_rope, softmax, swiglu, decode_attention, fp8_gemm) goes
/// through one path. The first
/// call for a key (operator, shape, dtype, mode) looks it up in the database (once; then in
/// memory), resolves a miss by the MissPolicy, loads the config's module (from the compile cache,
/// or compiles it with NVRTC) and allocates the workspace its plan needs. Later calls validate the
/// arguments (D8: dimensions, dtypes, the alignment the config requires) and launch on the
/// caller's stream: no allocation, no synchronisation, no compilation, so they are safe inside CUDA
/// graph capture once the key is prepared (prepare_<op>). Every failure is a ktune::Error thrown
/// before anything is launched. Thread-safe.
///
/// This header needs no CUDA headers: a stream is `CUstream_st*`, which is what `CUstream` (driver
/// API) and `cudaStream_t` (runtime API) are. Link ktune_tuner. docs/runtime.md has the details.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ktune/dtype.hpp"
#include "ktune/error.hpp"

struct CUstream_st;

namespace ktune {

/// A CUDA stream (CUstream / cudaStream_t); nullptr is the legacy default stream.
using Stream = CUstream_st*;

// ktune::DType (ktune/dtype.hpp) is the element type of an operator's tensors (accumulation is
// f32). kFP8E4M3 is for fp8 operators, the others refuse it with kBadInput; every operator refuses
// kFP8E5M2.
/// B's layout: kNT is [N,K] row-major (the nn.Linear weight), kNN is [K,N] row-major.
enum class Layout { kNT, kNN };

/// "nt", "nn".
const char* to_string(Layout layout) noexcept;

/// softmax's mask. kCausal: column c of row r is masked when c > r + max(cols - rows, 0) (the rows
/// are the last `rows` query positions over `cols` keys); kPadding: column c of row r is masked
/// when c >= lengths[r] (int32, in [0, cols]). Masked columns, and rows with none unmasked, give 0.
enum class SoftmaxMask { kNone, kCausal, kPadding };
/// rmsnorm_rope's rotary pairing: kNeox rotate-half (j, j + D/2), kGptj interleaved (2j, 2j + 1).
enum class RopeStyle { kNeox, kGptj };
/// fp8_gemm's scales: kPerTensor a_scale[1], b_scale[1]; kRowCol a_scale[M] (per row of A) and
/// b_scale[N] (per column of C).
enum class Fp8Scaling { kPerTensor, kRowCol };

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

/// How the runtime serves one key (operator, shape, dtype, mode).
struct PlanInfo {
  enum class Source { kTuned, kNearest, kDefault };
  Source source = Source::kDefault;
  std::string config_name;          ///< canonical, e.g. gemm.bf16.nt.gemv.k256.sk4.w4.r2
  std::string tuned_shape;          ///< the shape it was tuned for ("" for the default config)
  double tuned_median_us = 0;       ///< from the sweep (0 for the default config)
  std::size_t launches = 0;         ///< kernels per call (split-K: GEMM + reduction)
  std::size_t workspace_bytes = 0;  ///< workspace the config needs (split-K partials; 0: none)
};
/// The name PlanInfo had when gemm was the only operator.
using GemmPlanInfo = PlanInfo;

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
  PlanInfo prepare_gemm(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout);

  /// Whether the key has been prepared (its plan is in memory): the hot-path lookup alone, without
  /// launching. A gemm() of a ready key allocates nothing and compiles nothing.
  bool ready(int64_t m, int64_t n, int64_t k, DType dtype, Layout layout) const noexcept;

  // The operators. Tensors are row-major and contiguous, in `dtype` unless said otherwise, and
  // every pointer is aligned at least to its element. Each call is asynchronous on `stream`, and
  // throws ktune::Error(kBadInput) before any launch for a null pointer, a dimension outside
  // [1, 2^31-1], a misaligned pointer (its element, or what the config requires), a bad scalar, or
  // a problem the operator's templates cannot serve (a dtype, mode or head_dim they lack: the
  // message names it); kRuntime when the launch fails; kNotFound on a miss with MissPolicy::kError.
  // As for gemm, the first call of a key inside stream capture throws kBadInput: prepare first.

  /// y[rows, hidden] = x / sqrt(mean(x^2) + eps) * w per row (w [hidden]), f32 inside. eps > 0.
  void rmsnorm(const void* x, const void* w, void* y, int64_t rows, int64_t hidden, float eps, DType dtype,
               Stream stream);
  /// The fused residual add: s = x + residual (rounded to dtype) is written to residual_out, and
  /// y = rmsnorm(s) * w. residual_out may be residual (in place).
  void rmsnorm_residual(const void* x, const void* residual, const void* w, void* y, void* residual_out,
                        int64_t rows, int64_t hidden, float eps, DType dtype, Stream stream);
  /// Look-up, module load and workspace for rmsnorm (`residual`: rmsnorm_residual) of this shape.
  PlanInfo prepare_rmsnorm(int64_t rows, int64_t hidden, DType dtype, bool residual = false);

  /// Per-head RMSNorm of q [tokens, heads_q, head_dim] and k [tokens, heads_kv, head_dim] (weights
  /// q_weight, k_weight [head_dim]) fused with the rotary embedding at positions[token] (int32),
  /// into q_out and k_out (may be q and k). cos_sin [max_pos, head_dim] f32 holds cos at [p][j] and
  /// sin at [p][head_dim/2 + j]; a position is taken modulo max_pos (never read past the table).
  /// head_dim 64, 128 or 256.
  void rmsnorm_rope(const void* q, const void* k, const void* q_weight, const void* k_weight,
                    const float* cos_sin, const int32_t* positions, void* q_out, void* k_out, int64_t tokens,
                    int64_t heads_q, int64_t heads_kv, int64_t head_dim, int64_t max_pos, float eps,
                    RopeStyle style, DType dtype, Stream stream);
  PlanInfo prepare_rmsnorm_rope(int64_t tokens, int64_t heads_q, int64_t heads_kv, int64_t head_dim,
                                RopeStyle style, DType dtype);

  /// y[rows, cols] = softmax(scale * x) per row with `mask` (SoftmaxMask), f32 inside; y must not
  /// overlap x. `lengths` [rows] int32 for kPadding, else ignored (may be null). scale finite.
  void softmax(const void* x, void* y, const int32_t* lengths, int64_t rows, int64_t cols, float scale,
               SoftmaxMask mask, DType dtype, Stream stream);
  PlanInfo prepare_softmax(int64_t rows, int64_t cols, SoftmaxMask mask, DType dtype);

  /// out[m, i] = silu(gate) * up with gate and up the two halves of each row of x [m, 2i] (vLLM's
  /// silu_and_mul). m <= 65535.
  void swiglu(const void* x, void* out, int64_t m, int64_t i, DType dtype, Stream stream);
  /// out[m, i] = silu(gate) * up from two inputs gate [m, i] and up [m, i].
  void swiglu(const void* gate, const void* up, void* out, int64_t m, int64_t i, DType dtype, Stream stream);
  /// `split`: the two-input form.
  PlanInfo prepare_swiglu(int64_t m, int64_t i, DType dtype, bool split = false);

  /// Attention of one query token a sequence over a KV cache (decode step): o[batch, heads_q,
  /// head_dim] from q [batch, heads_q, head_dim] and k, v [batch, heads_kv, seq_max, head_dim],
  /// heads_q a multiple of heads_kv (GQA), head_dim 64 or 128, dtype bf16. Sequence b attends keys
  /// [0, seq), or [0, context_lens[b]) clamped to [0, seq] when `context_lens` (int32 [batch]) is
  /// given (a length 0 gives o = 0); seq <= seq_max. scale 0 means 1/sqrt(head_dim). k and v 16-byte
  /// aligned. The key includes seq, seq_max and whether context_lens is given: a graph replayed
  /// over growing contexts keeps seq (e.g. = seq_max) and passes the lengths in context_lens.
  /// Split-KV plans use the runtime's workspace (see docs/runtime.md for concurrent streams).
  void decode_attention(const void* q, const void* k, const void* v, void* o, const int32_t* context_lens,
                        int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t seq, int64_t seq_max,
                        int64_t head_dim, float scale, DType dtype, Stream stream);
  PlanInfo prepare_decode_attention(int64_t batch, int64_t heads_q, int64_t heads_kv, int64_t seq,
                                    int64_t seq_max, int64_t head_dim, bool context_lens, DType dtype);

  /// C[M,N] (bf16) = A[M,K] · B[N,K]^T (e4m3, B the nn.Linear weight) times the scales (f32, read
  /// on the device when the kernel runs), f32 accumulation, saturated to the largest finite bf16.
  /// K a multiple of 16; A, B 16-byte aligned; needs sm_89 or newer. Split-K plans use the
  /// runtime's workspace.
  void fp8_gemm(const void* a, const void* b, const float* a_scale, const float* b_scale, void* c, int64_t m,
                int64_t n, int64_t k, Fp8Scaling scaling, Stream stream);
  PlanInfo prepare_fp8_gemm(int64_t m, int64_t n, int64_t k, Fp8Scaling scaling);

  /// Plans prepared so far (every operator and key).
  std::size_t prepared_plans() const;

  /// The GPU model the answers are for, e.g. "NVIDIA H200".
  const std::string& gpu_name() const;
  /// Tuned keys loaded from the database for this GPU.
  std::size_t tuned_keys() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
