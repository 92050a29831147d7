#pragma once
/// Host-side spec of `rope_append` (rope_append.cu): q and k rotated at positions[token] (after a
/// per-head RMSNorm of both in the "+norm" modes, Qwen3's q_norm / k_norm), k and v written into the
/// KV cache at the token's position, contiguous or paged, in one launch. f32 inside, T in and out.
/// Dims: tokens, heads_q, heads_kv, head_dim, rot_dim (the rotated prefix of a head; partial rotary
/// when < head_dim). Both multiples of 16, rot_dim <= head_dim <= 512.
/// Modes (Problem::layout): the pairing "neox" (or "": rotate-half) or "gptj" (interleaved), then
/// "+norm" and "+paged" in that order: "neox", "gptj", "neox+norm", ..., "gptj+norm+paged". A mode's
/// code is its index in layouts(): style + 2 * norm + 4 * paged.
/// Tensors: q, k, v, q_weight and k_weight ("+norm" only), cos_sin [kMaxPos, rot_dim] f32,
/// positions [tokens] int32, block_table ("+paged": int32 [tokens]) inputs; q_out, k_cache,
/// v_cache outputs; the GPU reference writes q_ref, k_cache_ref, v_cache_ref (f32).
/// The tuned problem's cache (kTunedGeometry): every token is its own sequence with one row, so the
/// cache [tokens, heads_kv, 1, head_dim] is written whole (outputs start poisoned); the paged block
/// table is a permutation of the blocks. The writes are the same scattered rows of head_dim as a
/// real cache's (the row's place in its block costs nothing); the call's geometry (tokens a sequence,
/// cache rows, block table columns, blocks) is given at each call (the runtime's scalars).
/// Parameters: THREADS (lanes a head: 1..32, a power of two), HEADS (heads a block), VEC (even,
/// <= 16 bytes), ITEMS (heads a lane group loads at once: 1, 2, 4).
/// Rules: (rot_dim / 2) and (head_dim - rot_dim) multiples of THREADS * VEC; THREADS * HEADS a
/// multiple of 32 and <= 1024; ITEMS * head_dim / THREADS elements a thread within kMaxHeldBytes.
/// Name: `rope_append.<dtype>.<mode with + as _>.t<THREADS>.h<HEADS>.v<VEC>.i<ITEMS>`.

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "kernel_templates/reference_ops.hpp"
#include "kernel_templates/rope_append/rope_append_f64.hpp"

namespace ktune::kernel_templates {

class RopeAppendSpec final : public KernelSpec {
 public:
  static constexpr float kEps = 1e-6f;
  /// Rows of the cos/sin table of the launches the spec builds (dispatch passes the model's).
  static constexpr int64_t kMaxPos = 4096;
  static constexpr int64_t kMaxHeadDim = 512;
  /// Bytes of its heads a thread may hold in registers (128 registers): the default config holds
  /// the largest head, 512 f32 values over 4 lanes, within it.
  static constexpr int64_t kMaxHeldBytes = 512;
  /// The tuned plan's num_blocks: no bound (its block table is a permutation of the tokens'
  /// blocks); a constant, so the runtime finds it in the plan and puts the caller's there.
  static constexpr int64_t kTunedNumBlocks = 2147483647;

  /// ktune_rope_append's parameters, in order.
  static constexpr std::string_view kSignature[] = {
      "q",           "k",          "v",          "q_weight",   "k_weight", "cos_sin", "positions",
      "block_table", "q_out",      "k_cache",    "v_cache",    "tokens",   "heads_q", "heads_kv",
      "seq_tokens",  "cache_rows", "max_blocks", "num_blocks", "max_pos",  "eps"};
  /// Runtime::rope_append's tensors (the weights null without the norm, the block table without
  /// the paged cache).
  static constexpr std::string_view kDispatchSlots[] = {"q",        "k",       "v",         "q_weight",
                                                        "k_weight", "cos_sin", "positions", "block_table",
                                                        "q_out",    "k_cache", "v_cache"};
  /// The call's cache geometry and max_pos by name (the tuned geometry's values: 1 could be any
  /// dimension's), eps by value.
  static constexpr CallScalar kDispatchScalars[] = {
      {.name = "seq_tokens", .kind = CallScalar::Kind::kI32, .spec_value = 1},
      {.name = "cache_rows", .kind = CallScalar::Kind::kI32, .spec_value = 1},
      {.name = "max_blocks", .kind = CallScalar::Kind::kI32, .spec_value = 1},
      {.name = "num_blocks",
       .kind = CallScalar::Kind::kI32,
       .spec_value = static_cast<double>(kTunedNumBlocks)},
      {.name = "max_pos", .kind = CallScalar::Kind::kI32, .spec_value = static_cast<double>(kMaxPos)},
      {.name = "eps", .kind = CallScalar::Kind::kF32, .spec_value = kEps, .by_value = true}};
  /// How Runtime::rope_append binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {.default_variant = "headwise",
                                                .slots = kDispatchSlots,
                                                .signature = kSignature,
                                                .scalars = kDispatchScalars};

  /// A mode's parts.
  struct Mode {
    RopeStyle style = RopeStyle::kNeox;
    bool norm = false;
    bool paged = false;
  };

  std::string_view kernel() const override { return "rope_append"; }
  std::string_view variant() const override { return "headwise"; }
  std::vector<std::string> dims() const override {
    return {"tokens", "heads_q", "heads_kv", "head_dim", "rot_dim"};
  }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override { return {"THREADS", "HEADS", "VEC", "ITEMS"}; }
  std::string_view source_name() const override { return "rope_append.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_rope_append<HEAD_DIM,ROT_DIM,THREADS,VEC,HEADS,ITEMS,GPTJ,NORM,PAGED,T>`: grid
  /// ceil(items / (HEADS * ITEMS)), items = tokens * (heads_q + 2 heads_kv).
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// q, k and v read once, q and the cache rows written once, the weights, positions, block ids and
  /// one table row a token read once.
  WorkCounts work(const Problem& problem) const override;
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  /// Inputs by tensor name (positions and block_table as int32 values) -> q_out, k_cache, v_cache
  /// of the tuned geometry.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 4 lanes a head, 16 heads a block, VEC 2: serves every problem the spec accepts.
  Config default_config(const Problem& problem) const override;

  /// The mode of `layout`, or nullopt when it is not one.
  static std::optional<Mode> parse_mode(std::string_view layout);
  /// The layout text of `mode` ("gptj+norm+paged").
  static std::string mode_text(const Mode& mode);
  /// Why `problem` is outside rope_append (dims, dtype, mode, head_dim, rot_dim), whatever the config.
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// The geometry the tuned problem's cache has (see the header).
  static KvCacheGeometry tuned_geometry(const Problem& problem);
};

}  // namespace ktune::kernel_templates
