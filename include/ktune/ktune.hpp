#pragma once
/// ktune's C++ dispatch runtime: launch the kernel config `ktune tune` found best for this GPU.
///
///     ktune::Runtime rt;                                    // opens $KTUNE_DB (read-only), device 0
///     ktune::GemmArgs g{.a = a, .b = w, .c = c, .m = 16, .n = 4096, .k = 4096};    // bf16, B as [n,k]
///     rt.prepare(g);                                        // optional warm-up (before graph capture)
///     rt.gemm(g, stream);
///     rt.rmsnorm({.x = x, .w = w, .y = y, .rows = rows, .hidden = 4096}, stream);
///
/// Every operator (gemm, rmsnorm, rmsnorm_rope, rope_append, softmax, swiglu, decode_attention, fp8_gemm)
/// takes one argument struct and goes through one path; a user kernel (docs/byo.md) is launched by name with
/// launch(). The first call for a key (operator, shape, dtype, mode) looks it up in the database (once; then
/// in memory), resolves a miss by the MissPolicy, loads the config's module (from the compile cache, or
/// compiles it with NVRTC) and allocates the workspace its plan needs. Later calls validate the arguments
/// (D8: dimensions, dtypes, strides, the alignment the config requires) and launch on the caller's stream: no
/// allocation, no synchronisation, no compilation, so they are safe inside CUDA graph capture once
/// the key is prepared (prepare()). Every failure is a ktune::Error thrown before anything is
/// launched.
///
/// Threads: one Runtime serves any number of threads and streams at once (prepare and the calls
/// are thread-safe). A call uses the runtime's own workspace for its key unless it passes one, so
/// two streams that run one split-K/split-KV key concurrently must each pass their own Workspace.
/// The Runtime must outlive every call (and every graph that replays its launches).
///
/// This header needs no CUDA headers: a stream is `CUstream_st*`, which is what `CUstream` (driver
/// API) and `cudaStream_t` (runtime API) are. Link ktune::runtime. docs/runtime.md has the details.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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
  /// A file to which every key served from a nearest tuned shape or a default config, or refused
  /// by MissPolicy::kError, is appended, once a process, as `KERNEL SHAPE DTYPE [LAYOUT]` lines
  /// that `ktune tune --shapes FILE` tunes (several processes may share the file). "": $KTUNE_RECORD_MISSES
  /// when set, else no record.
  std::string record_misses;
  /// Folders of user kernels (NAME.cu beside NAME.toml, docs/byo.md) that launch() serves by name,
  /// besides those of $KTUNE_KERNEL_DIR (':'-separated). A description error throws
  /// ktune::Error(kBadInput) "FILE:LINE: field: message" from the constructor.
  std::vector<std::string> kernel_dirs;
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
  /// false: the tuned config was never checked against a reference (a user kernel whose
  /// description says `verify = false`, docs/byo.md).
  bool verified = true;
};

/// A user kernel's problem dimensions by name, e.g. {{"rows", 4096}, {"cols", 4096}}.
using ProblemDims = std::vector<std::pair<std::string, int64_t>>;

/// gemm's fused epilogue, applied in f32 before C is rounded: + bias[n], then silu(x) = x / (1 + e^-x).
enum class Epilogue { kNone, kBias, kSilu, kBiasSilu };

/// Device memory a call may use as its workspace instead of the runtime's own for the key (so two
/// streams can run one key at once). `ptr` null: the runtime's own. At least
/// PlanInfo::workspace_bytes.
struct Workspace {
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

// The operators' arguments. Tensors are row-major, in `dtype` unless said otherwise, and every
// pointer is aligned at least to its element. Dimensions are in [1, 2^31-1]. prepare() reads only
// the fields that make the key (dimensions, dtype, mode), and gemm's row strides; the pointers may
// be null there.

/// C[m,n] = epilogue(A[m,k] · B): B is [n,k] (kNT, the nn.Linear weight) or [k,n] (kNN).
struct GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  const void* bias = nullptr;  ///< [n] in dtype; read with Epilogue::kBias and kBiasSilu
  int64_t m = 0, n = 0, k = 0;
  /// Row strides in elements (0: contiguous, i.e. k for A, k (kNT) or n (kNN) for B, n for C), in
  /// [row's length, 2^31-1]: strided views, such as a column slice of a fused QKV projection's
  /// output (ldc > n) or of its input (lda > k), are read and written in place; C's columns beyond
  /// n are not touched. The strides are not part of the key: a tuned config serves any stride,
  /// except that one whose fast path needs 16-byte rows (wgmma_tma's tensor maps) gives the call to
  /// the default config when a stride in bytes is not a multiple of 16.
  int64_t lda = 0, ldb = 0, ldc = 0;
  DType dtype = DType::kBF16;
  Layout layout = Layout::kNT;
  Epilogue epilogue = Epilogue::kNone;
  Workspace workspace;  ///< split-K partials
};

/// y[rows, hidden] = x / sqrt(mean(x^2) + eps) * w per row (w [hidden]), f32 inside. With
/// `residual` (not null): s = x + residual (rounded to dtype) is written to residual_out (which may
/// be residual: in place) and y = rmsnorm(s) * w.
struct RmsNormArgs {
  const void* x = nullptr;
  const void* residual = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  void* residual_out = nullptr;
  int64_t rows = 0, hidden = 0;
  float eps = 1e-6f;  ///< > 0
  DType dtype = DType::kBF16;
};

/// Per-head RMSNorm of q [tokens, heads_q, head_dim] and k [tokens, heads_kv, head_dim] (weights
/// q_weight, k_weight [head_dim]) fused with the rotary embedding at positions[token] (int32), into
/// q_out and k_out (may be q and k). cos_sin [max_pos, head_dim] f32 holds cos at [p][j] and sin at
/// [p][head_dim/2 + j]; a position is taken modulo max_pos (never read past the table). head_dim
/// 64, 128 or 256.
struct RmsNormRopeArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* q_weight = nullptr;
  const void* k_weight = nullptr;
  const float* cos_sin = nullptr;
  const int32_t* positions = nullptr;
  void* q_out = nullptr;
  void* k_out = nullptr;
  int64_t tokens = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  int64_t max_pos = 0;  ///< rows of cos_sin
  float eps = 1e-6f;
  RopeStyle style = RopeStyle::kNeox;
  DType dtype = DType::kBF16;
};

/// The rotary embedding of q and k at positions[token] (int32) with k and v appended to the KV
/// cache, in one launch (Llama, Qwen2, Mistral); with q_weight and k_weight, a per-head RMSNorm of q
/// and k first (Qwen3's q_norm / k_norm: give both or neither). q [tokens, heads_q, head_dim] ->
/// q_out (may be q); k, v [tokens, heads_kv, head_dim] -> k_cache, v_cache at the token's position.
/// Only the first rot_dim elements of a head rotate (partial rotary; 0 means head_dim). cos_sin
/// [max_pos, rot_dim] f32 holds cos at [p][j] and sin at [p][rot_dim/2 + j] (any scaling, llama3
/// or YaRN, is the table's); the table row is the position modulo max_pos (as unsigned).
/// Token t belongs to sequence t / seq_tokens (decode: 1, a token a sequence; one prompt of n
/// tokens: n). The cache row of a position is position modulo cache_rows:
/// - contiguous (block_table null): k_cache and v_cache are [sequences, heads_kv, cache_rows,
///   head_dim] (decode_attention's [batch, heads_kv, seq_max, head_dim]);
/// - paged: block_table int32 [sequences, max_blocks] names the block of each cache_rows
///   (block size) positions (block position / cache_rows modulo max_blocks); the caches are
///   [num_blocks, heads_kv, cache_rows, head_dim]; a block id outside [0, num_blocks) writes nothing.
/// head_dim and rot_dim multiples of 16, rot_dim <= head_dim <= 512.
struct RopeAppendArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* q_weight = nullptr;  ///< with k_weight: the RMSNorm form
  const void* k_weight = nullptr;
  const float* cos_sin = nullptr;
  const int32_t* positions = nullptr;
  const int32_t* block_table = nullptr;  ///< set: the paged cache
  void* q_out = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  int64_t tokens = 0, heads_q = 0, heads_kv = 0, head_dim = 0;
  int64_t rot_dim = 0;     ///< 0: head_dim
  int64_t seq_tokens = 1;  ///< tokens a sequence
  int64_t cache_rows = 0;  ///< contiguous: seq_max; paged: the block size
  int64_t max_blocks = 0;  ///< paged: the block table's columns
  int64_t num_blocks = 0;  ///< paged: blocks in each cache
  int64_t max_pos = 0;     ///< rows of cos_sin
  float eps = 1e-6f;       ///< the RMSNorm form's
  RopeStyle style = RopeStyle::kNeox;
  DType dtype = DType::kBF16;
};

/// y[rows, cols] = softmax(scale * x) per row with `mask`, f32 inside; y must not overlap x.
/// `lengths` [rows] int32 for kPadding, else ignored.
struct SoftmaxArgs {
  const void* x = nullptr;
  void* y = nullptr;
  const int32_t* lengths = nullptr;
  int64_t rows = 0, cols = 0;
  float scale = 1.0f;  ///< finite
  SoftmaxMask mask = SoftmaxMask::kNone;
  DType dtype = DType::kBF16;
  Workspace workspace;  ///< a split row's partial (max, sum) pairs
};

/// out[m, i] = silu(gate) * up. Fused form (`x` set): gate and up are the two halves of each row of
/// x [m, 2i] (vLLM's silu_and_mul). Split form (`x` null): gate [m, i] and up [m, i]. m <= 65535.
struct SwigluArgs {
  const void* x = nullptr;
  const void* gate = nullptr;
  const void* up = nullptr;
  void* out = nullptr;
  int64_t m = 0, i = 0;
  DType dtype = DType::kBF16;
};

/// Attention of one query token a sequence over a KV cache (a decode step): o[batch, heads_q,
/// head_dim] from q [batch, heads_q, head_dim] and k, v [batch, heads_kv, seq_max, head_dim],
/// heads_q a multiple of heads_kv (GQA), head_dim 64 or 128, dtype bf16, k and v 16-byte aligned.
/// Sequence b attends keys [0, seq), or [0, context_lens[b]) clamped to [0, seq] when
/// `context_lens` (int32 [batch], device memory) is given; a length 0 gives o = 0.
///
/// A decode loop uses one plan for every step: key it on the cache (seq = seq_max) and pass the
/// growing lengths in context_lens, so a graph captured once replays every step.
///
/// A paged cache (block_table set, the "paged" mode; the tensor-core templates serve it): k and v
/// are [num_blocks, heads_kv, block_size, head_dim], block_table int32 [batch, max_blocks] names the
/// block of each block_size keys of a sequence (key t: row t % block_size of block
/// block_table[b][t / block_size]); block_size a multiple of 16, max_blocks * block_size >= seq; a
/// block id outside [0, num_blocks) reads block 0. seq_max is unused; the geometry is given at each
/// call (one plan serves any block size).
struct DecodeAttentionArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  const int32_t* context_lens = nullptr;
  int64_t batch = 0, heads_q = 0, heads_kv = 0;
  int64_t seq = 0;      ///< keys attended (the key); at most seq_max
  int64_t seq_max = 0;  ///< the cache's capacity (row count of k and v per head); 0: seq
  int64_t head_dim = 0;
  float scale = 0.0f;  ///< 0: 1/sqrt(head_dim)
  DType dtype = DType::kBF16;
  Workspace workspace;                   ///< split-KV partials
  const int32_t* block_table = nullptr;  ///< set: the paged cache
  int64_t block_size = 0, max_blocks = 0, num_blocks = 0;
};

/// C[M,N] (bf16) = A[M,K] · B[N,K]^T (e4m3, B the nn.Linear weight) times the scales (f32, read on
/// the device when the kernel runs), f32 accumulation, saturated to the largest finite bf16. K a
/// multiple of 16; A, B 16-byte aligned; needs sm_89 or newer.
struct Fp8GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  const float* a_scale = nullptr;  ///< [1] (kPerTensor) or [m] (kRowCol)
  const float* b_scale = nullptr;  ///< [1] (kPerTensor) or [n] (kRowCol)
  void* c = nullptr;
  int64_t m = 0, n = 0, k = 0;
  Fp8Scaling scaling = Fp8Scaling::kPerTensor;
  Workspace workspace;  ///< split-K partials
};

class Runtime {
 public:
  /// Opens the database and the device. Throws ktune::Error: kNoDevice without a driver or GPU,
  /// kBadInput for a file that is not a ktune database or a bad device ordinal.
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Each operator call is asynchronous on `stream` and throws ktune::Error(kBadInput) before any
  // launch for a null pointer the call reads, a dimension outside [1, 2^31-1], a misaligned
  // pointer (its element, or what the config requires and the default config does not), a bad
  // scalar, or a problem the operator's templates cannot serve (the message names it); kRuntime
  // when the launch fails; kNotFound on a miss with MissPolicy::kError. The first call of a key
  // inside stream capture throws kBadInput: prepare the key first.

  void gemm(const GemmArgs& args, Stream stream);
  void rmsnorm(const RmsNormArgs& args, Stream stream);
  void rmsnorm_rope(const RmsNormRopeArgs& args, Stream stream);
  void rope_append(const RopeAppendArgs& args, Stream stream);
  void softmax(const SoftmaxArgs& args, Stream stream);
  void swiglu(const SwigluArgs& args, Stream stream);
  void decode_attention(const DecodeAttentionArgs& args, Stream stream);
  void fp8_gemm(const Fp8GemmArgs& args, Stream stream);

  /// Everything the first call of the key does except launching: look-up, module load, the
  /// runtime's workspace. Call it before capturing a CUDA graph. Returns how the key is served
  /// (gemm: with the given row strides, which may take the default config; see GemmArgs).
  PlanInfo prepare(const GemmArgs& args);
  PlanInfo prepare(const RmsNormArgs& args);
  PlanInfo prepare(const RmsNormRopeArgs& args);
  PlanInfo prepare(const RopeAppendArgs& args);
  PlanInfo prepare(const SoftmaxArgs& args);
  PlanInfo prepare(const SwigluArgs& args);
  PlanInfo prepare(const DecodeAttentionArgs& args);
  PlanInfo prepare(const Fp8GemmArgs& args);

  /// A user kernel (docs/byo.md) by name: its tuned config for (dims, dtype) on this GPU, else its
  /// default config (its description's first seed). `buffers` are the device pointers of its
  /// buffer arguments ([[arg]] of kind input and output, in the description's order; workspace
  /// arguments are the runtime's); scalars come from the description's expressions. Asynchronous
  /// on `stream`. Throws ktune::Error: kNotFound for a kernel no loaded folder holds (see
  /// RuntimeOptions::kernel_dirs), kBadInput for dimensions that are not the kernel's, a dtype it
  /// does not serve, a wrong number of buffers or a null one.
  void launch(const std::string& kernel, const ProblemDims& dims, DType dtype,
              const std::vector<void*>& buffers, Stream stream);
  /// Everything launch() does the first time for the key except launching.
  PlanInfo prepare(const std::string& kernel, const ProblemDims& dims, DType dtype);

  /// Whether the call's key has been prepared (its plan is in memory), without launching: a call
  /// of a ready key allocates nothing and compiles nothing.
  bool ready(const GemmArgs& args) const noexcept;

  /// Plans prepared so far (every operator and key).
  std::size_t prepared_plans() const;

  /// The GPU model the answers are for, e.g. "NVIDIA H200".
  const std::string& gpu_name() const;
  /// Tuned keys loaded from the database for this GPU.
  std::size_t tuned_keys() const;

  /// Records from now on every key prepared from a nearest tuned shape or a default config into
  /// `path` (RuntimeOptions::record_misses), replacing the file given before; "" stops recording.
  /// Keys prepared before the call are not recorded. Throws ktune::Error(kBadInput) when the file
  /// cannot be opened for appending.
  void record_misses(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ktune
