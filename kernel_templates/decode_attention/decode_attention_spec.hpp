#pragma once
/// Host-side spec of `decode_attention` (decode_attention.cu): one query token per sequence over a
/// bf16 KV cache, grouped-query, split-KV (flash-decoding) with a log-sum-exp combine.
/// Problem dims (kernel_catalog's canonical order): batch, heads_q, heads_kv, seq (context length),
/// head_dim (64 or 128); dtype bf16; mode (layout) "" (a contiguous cache) or "paged" (the tensor-core
/// templates: k and v [num_blocks, heads_kv, block_size, head_dim] and an int32 block_table [batch,
/// max_blocks]; the tuned plans take blocks of 16 keys and a permutation of the blocks).
/// Tensors: inputs q [batch, heads_q, head_dim], k and v [batch, heads_kv, seq_max, head_dim]
/// (seq_max = seq in the tuned plans), optionally context_lens [batch] (int32, declared kF32, only in
/// plans built with DecodeAttentionCall::context_lens); output o [batch, heads_q, head_dim];
/// workspace (f32, SPLIT_K > 1 only, unless the template merges the splits in its main kernel)
/// [batch * heads_q * SPLIT_K * (head_dim + 2)]. The GPU reference
/// writes o_ref (f32) and uses the f32 scratch scores_ref [batch * heads_q * seq].
/// Launches: ktune_decode_attention<D,G,BLOCK_N,WARPS,T> on grid (SPLIT_K, heads_q / G, batch), then
/// for SPLIT_K > 1 ktune_decode_attention_combine<D,T> on ceil(batch * heads_q / 4) blocks of 128.
/// G = heads_q / heads_kv when at most 8, else its largest divisor <= 8 (K/V then read group / G
/// times).
/// Parameters: BLOCK_N (keys a block tile), WARPS (1, 2, 4, 8), SPLIT_K (context partitions, 1 to
/// 1024). BLOCK_N must be WARPS * (256 / head_dim) * U with U (16-byte K and V loads a lane a tile)
/// in [1, 8] and U * G <= 32 (registers).
/// Name: `decode_attention.bf16.n<BLOCK_N>.w<WARPS>.sk<SPLIT_K>`.

#include "kernel_templates/decode_attention/decode_attention_f64.hpp"
#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

/// A call's KV-cache geometry beyond the tuned shape (dispatch, tests). The KernelSpec overrides use
/// the default: seq_max = seq, no context_lens, scale 1/sqrt(head_dim).
/// In the "paged" mode the geometry is the paged cache's; 0 takes the tuned plans' (blocks of
/// kTunedBlockSize keys, ceil(seq / kTunedBlockSize) a sequence, batch times that many blocks).
struct DecodeAttentionCall {
  int64_t seq_max = 0;        ///< cache capacity in keys (the K/V head stride); 0 means seq
  bool context_lens = false;  ///< a per-sequence length tensor "context_lens" (int32 [batch])
  float scale = 0.0f;         ///< softmax scale; 0 means 1/sqrt(head_dim)
  int64_t block_size = 0;     ///< paged: keys a block (a multiple of 16)
  int64_t max_blocks = 0;     ///< paged: the block table's columns
  int64_t num_blocks = 0;     ///< paged: blocks in each cache
};

class DecodeAttentionSpec : public KernelSpec {
 public:
  /// Largest GQA group a block holds in registers (and the largest block head count G).
  static constexpr int64_t kMaxHeadsPerBlock = 8;
  /// 16-byte loads of K and of V a lane keeps in flight per tile, at most.
  static constexpr int64_t kMaxUnroll = 8;
  /// U * G scores a lane holds per tile, at most (with G * 16 f32 of q and accumulators: < 255
  /// registers).
  static constexpr int64_t kMaxScores = 32;
  /// gridDim.y and .z limit.
  static constexpr int64_t kMaxGridYZ = 65535;
  static constexpr int64_t kMaxSplitK = 1024;
  /// The paged mode's tuned block size: the smallest a paged call may have (and vLLM's default).
  static constexpr int64_t kTunedBlockSize = 16;

  /// The parameters of every template's main kernel, in order (decode_attention.cu leaves the
  /// paged ones unnamed: it reads a contiguous cache).
  static constexpr std::string_view kSignature[] = {
      "q",   "k",       "v",          "o",     "workspace",   "context_lens", "heads_q",    "heads_kv",
      "seq", "seq_max", "num_splits", "scale", "block_table", "block_size",   "max_blocks", "num_blocks"};
  /// Runtime::decode_attention's tensors.
  static constexpr std::string_view kDispatchSlots[] = {"q", "k", "v", "o", "context_lens", "block_table"};
  /// The scale the dispatch runtime builds its plans with (DecodeAttentionCall::scale) and replaces
  /// with the caller's at launch, by value: the plan's only f32 argument. Any finite non-zero value
  /// serves; 1/pi is no one's default.
  static constexpr float kDispatchScale = 0.318309886f;
  /// The caller's scale (by value), then the paged geometry by name, any value the plan holds
  /// there (the tuned plans' geometry depends on seq).
  static constexpr CallScalar kDispatchScalars[] = {
      {.name = "scale", .kind = CallScalar::Kind::kF32, .spec_value = kDispatchScale, .by_value = true},
      {.name = "block_size", .kind = CallScalar::Kind::kI32, .spec_value = CallScalar::kAnyValue},
      {.name = "max_blocks", .kind = CallScalar::Kind::kI32, .spec_value = CallScalar::kAnyValue},
      {.name = "num_blocks", .kind = CallScalar::Kind::kI32, .spec_value = CallScalar::kAnyValue}};
  /// How Runtime::decode_attention binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {.default_variant = "splitkv",
                                                .slots = kDispatchSlots,
                                                .signature = kSignature,
                                                .scalars = kDispatchScalars};

  std::string_view kernel() const override { return "decode_attention"; }
  std::string_view variant() const override { return "splitkv"; }
  std::vector<std::string> dims() const override {
    return {"batch", "heads_q", "heads_kv", "seq", "head_dim"};
  }
  std::vector<DType> dtypes() const override { return {DType::kBF16}; }
  /// "" only: this template reads a contiguous cache (the tensor-core ones add "paged").
  std::vector<std::string> layouts() const override { return {""}; }
  std::vector<std::string> param_names() const override { return {"BLOCK_N", "WARPS", "SPLIT_K"}; }
  std::string_view source_name() const override { return "decode_attention.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// Both kernels (the combine one only for SPLIT_K > 1); independent of seq, batch and SPLIT_K.
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// 4 * batch * heads_q * seq * head_dim flops; K and V of the context read once, q read, o written.
  WorkCounts work(const Problem& problem) const override;
  /// k and v 16 bytes (required: no per-element path).
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  /// Inputs q, k, v (, context_lens as int32 values) -> o.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 4 warps, U = 4 (BLOCK_N 32 for head_dim 128, 64 for 64), and SPLIT_K for about two blocks an SM
  /// of an H200 (132 SMs) with at least 256 keys a split.
  Config default_config(const Problem& problem) const override;

  /// Why `call` cannot serve the problem (seq > seq_max, ...), or nullopt.
  std::optional<std::string> call_rejection(const Problem& problem, const DecodeAttentionCall& call) const;
  /// launch_plan for a call; throws ktune::Error(kBadInput) when rejected.
  LaunchPlan launch_plan(const Problem& problem, const Config& config, const DecodeAttentionCall& call) const;
  /// reference for a call.
  ReferenceSpec reference(const Problem& problem, const DecodeAttentionCall& call) const;
  /// cpu_reference for a call.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs,
                            const DecodeAttentionCall& call) const;

  /// Query heads a block: heads_q / heads_kv when <= 8, else its largest divisor <= 8.
  static int64_t heads_per_block(const Problem& problem);
  /// 16-byte loads of K (and of V) a lane a tile: BLOCK_N * head_dim / (WARPS * 256).
  static int64_t unroll(const Problem& problem, const Config& config);
  /// f32 elements of the workspace (0 for SPLIT_K 1).
  static int64_t workspace_elements(const Problem& problem, int64_t split_k);
  /// The scale a call uses.
  static float scale(const Problem& problem, const DecodeAttentionCall& call);
  /// The paged geometry a call uses (the tuned plans' where the call gives 0).
  static DecodeAttentionCall paged_geometry(const Problem& problem, DecodeAttentionCall call);
  static bool paged(const Problem& problem) { return problem.layout == "paged"; }

 protected:
  /// What every template rejects: dims, dtype, mode ("" or "paged": the references serve both),
  /// head_dim, the grid's limits.
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// The template's main kernel, e.g. "ktune_decode_attention<128,4,64,8,__nv_bfloat16>".
  virtual std::string main_kernel(const Problem& problem, const Config& config) const;
  /// Its block and dynamic shared memory (the grid is (SPLIT_K, heads_q / G, batch) for every
  /// template).
  virtual LaunchDims main_dims(const Problem& problem, const Config& config) const;
  /// Whether the main kernel merges the splits itself (o always written, no workspace and no combine
  /// launch) rather than leaving them to ktune_decode_attention_combine.
  virtual bool merges_splits_in_kernel() const { return false; }
};

}  // namespace ktune::kernel_templates
