#pragma once
/// Host-side spec of `softmax` (softmax.cu): row softmax of x [rows, cols] scaled by kScale, with an
/// optional mask, f32 inside, T in and out. Masked columns and rows without an unmasked column
/// give 0.
/// Modes (Problem::layout): "" no mask; "causal": column c of row r masked when
/// c > r + row_offset, row_offset = max(cols - rows, 0) (the last row sees every column: rows are
/// the last `rows` query positions over `cols` keys); "padding": column c masked when
/// c >= lengths[r] mod (cols + 1) (lengths [rows] int32, declared DType::kF32 like rmsnorm_rope's
/// positions: random bit patterns give random lengths in [0, cols]).
/// Tensors: x, [lengths] inputs; y output; the GPU reference writes y_ref (f32).
/// Parameters: THREADS (a row, multiple of 32), ROWS (rows a block), VEC (<= 16 bytes), ONLINE
/// (0: one pass, the row in registers packed as T, at most 256 bytes a thread; 1: online max/sum,
/// any cols; 2: staged, the row read once into dynamic shared memory, ROWS 1, cols * sizeof(T) <=
/// 227 KB less 128 bytes), SPLIT (blocks a row, 1..64; > 1 needs ONLINE 1 and ROWS 1: two launches, a
/// per-segment (max, sum) into the workspace tensor "partials" [rows * SPLIT * 2] f32, then the output; SPLIT
/// may be absent from a config and then reads as 1). Name:
/// `softmax.<dtype>[.causal|.padding].t<THREADS>.r<ROWS>.v<VEC>.on<ONLINE>[.s<SPLIT>]` (the suffix when the
/// config has SPLIT, as every config of the default space does; a config stored before SPLIT existed keeps
/// its name).

#include "kernel_templates/dispatch_binding.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "kernel_templates/reference_ops.hpp"

namespace ktune::kernel_templates {

class SoftmaxSpec final : public KernelSpec {
 public:
  /// Scale of the launches the spec builds (dispatch passes its own, e.g. 1/sqrt(head_dim)); not 1,
  /// so a kernel that ignores the scale fails verification.
  static constexpr float kScale = 0.75f;
  /// Runtime::softmax's tensors (lengths null but with the padding mask).
  static constexpr std::string_view kDispatchSlots[] = {"x", "y", "lengths"};
  /// The caller's scale replaces kScale, found by value: a split row passes it to both launches, at
  /// different positions.
  static constexpr CallScalar kDispatchScalars[] = {
      {.name = "scale", .kind = CallScalar::Kind::kF32, .spec_value = kScale, .by_value = true}};
  /// How Runtime::softmax binds to the family's templates.
  static constexpr DispatchBinding kDispatch = {
      .default_variant = "rowwise", .slots = kDispatchSlots, .scalars = kDispatchScalars};

  std::string_view kernel() const override { return "softmax"; }
  std::string_view variant() const override { return "rowwise"; }
  std::vector<std::string> dims() const override { return {"rows", "cols"}; }
  std::vector<DType> dtypes() const override { return {DType::kF32, DType::kF16, DType::kBF16}; }
  std::vector<std::string> layouts() const override;
  std::vector<std::string> param_names() const override {
    return {"THREADS", "ROWS", "VEC", "ONLINE", "SPLIT"};
  }
  std::string_view source_name() const override { return "softmax.cu"; }
  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  /// `ktune_softmax<THREADS,ROWS,VEC,CHUNKS,MASK,T>` (CHUNKS = 0 when ONLINE 1);
  /// `ktune_softmax_staged<THREADS,VEC,MASK,T>` (ONLINE 2); `ktune_softmax_partial<...>` and
  /// `ktune_softmax_split_finish<...>` (SPLIT > 1).
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  /// x read and y written once (+ lengths); ~5 flops an element.
  WorkCounts work(const Problem& problem) const override;
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  ReferenceSpec reference(const Problem& problem) const override;
  /// Inputs x (, lengths as int32 values) -> y.
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// 256 threads, 1 row, 16-byte vectors, online, no SPLIT (reads as 1): serves every problem.
  Config default_config(const Problem& problem) const override;

  /// The problem's mask; throws ktune::Error(kBadInput) for an unknown mode.
  static SoftmaxMask mask(const Problem& problem);
  /// The causal row offset the spec passes: max(cols - rows, 0).
  static int64_t row_offset(const Problem& problem);
  /// Vectors a thread holds in one-pass mode.
  static int64_t chunks(int64_t cols, const Config& config);
  /// The config's SPLIT (1 when absent).
  static int64_t split(const Config& config);
  /// Columns of one block's segment in split mode: ceil(cols / SPLIT) rounded up to VEC.
  static int64_t segment(int64_t cols, const Config& config);
  /// Dynamic shared memory of the staged mode: cols * sizeof(T) rounded up to 16 bytes.
  static int64_t staged_bytes(const Problem& problem);

  /// The MASK template argument of every softmax kernel: 0 none, 1 causal, 2 padding.
  static int mask_code(const Problem& problem);
  /// `softmax.<dtype>[.causal|.padding]`, the start of every softmax config's name.
  static std::string name_prefix(const Problem& problem);
  /// Why `problem` is outside softmax (dimensions, dtype, mode), whatever the config; the cluster
  /// variant (softmax_cluster_spec.hpp) shares it.
  std::optional<std::string> problem_rejection(const Problem& problem) const;
  /// The plan's tensors without a workspace: x, [lengths], y.
  static std::vector<TensorSpec> tensors(const Problem& problem);
  /// The kernel arguments every softmax kernel starts with: x, y (or `out`), lengths or null, rows,
  /// cols, scale, row_offset.
  static std::vector<ArgSpec> launch_args(const Problem& problem, const char* out = "y");
};

}  // namespace ktune::kernel_templates
