#pragma once
/// UserKernelSpec: the KernelSpec of a user kernel folder, made from its description
/// (user_kernel_description.hpp) instead of C++. The tuned template is instantiated as
/// `function<P1,...,Pn,T>` (the parameters in template-argument order, then the CUDA type of the
/// problem's dtype); its reference is a kernel `reference<T>` of the same file, or a config of the
/// same template, or none (`verify = false`: results are stored and shown unverified, D4).
///
/// Reference outputs are buffers named `<output>_ref` of the output's type; the reference kernel is
/// called with the candidate's argument list, each output replaced by its `_ref` twin.
///
/// A prebuilt description's candidates are its cubins (one per config and dtype): compile_spec
/// names the cubin file instead of a source, the launch takes the cubin's entry, threads and shared
/// memory, and the scratch pointers it appends are null or buffers `scratch.I` of their bytes per
/// program. Configs without a cubin are rejected, and so is every arch but the cubins' own; so are,
/// for a dtype and shape with a `[[prune]]` in the cubin index, the configs it does not keep (but
/// for the reference config, which is trusted whatever the pruning keeps). A cubin the index lists
/// as pending is still being compiled: compile_spec waits for it (user_kernel_pending_cubin.hpp),
/// and one whose compile failed is a compile error of its candidate.

#include <map>
#include <mutex>

#include "core/expression_evaluator.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "kernel_templates/user_kernel/user_kernel_description.hpp"

namespace ktune::kernel_templates {

class UserKernelSpec final : public KernelSpec {
 public:
  explicit UserKernelSpec(UserKernelDescription description);

  const UserKernelDescription& description() const { return d_; }
  /// Whether the description declares a reference (false: `verify = false`).
  bool verifies() const override { return d_.reference.kind != UserReference::Kind::kNone; }
  /// The file name the source is compiled under (NAME.cu) and the text NVRTC sees: the dtype
  /// headers, a `#line` naming the user's file, then the file.
  std::string compile_text() const;

  std::string_view kernel() const override { return d_.name; }
  std::string_view variant() const override { return d_.function; }
  std::vector<std::string> dims() const override { return d_.dims; }
  std::vector<DType> dtypes() const override { return d_.dtypes; }
  std::vector<std::string> layouts() const override { return {""}; }
  std::vector<std::string> param_names() const override;
  std::string_view source_name() const override { return source_name_; }

  std::optional<std::string> rejection(const Problem& problem, const Config& config) const override;
  /// rejection(), then the index's `[[prune]]` of the problem's dtype and shape.
  std::optional<std::string> tuning_rejection(const Problem& problem, const Config& config) const override;
  /// A prebuilt description runs on its cubins' architecture only.
  std::optional<std::string> arch_rejection(std::string_view arch) const override;
  std::string canonical_name(const Problem& problem, const Config& config) const override;
  CompileSpec compile_spec(const Problem& problem, const Config& config) const override;
  LaunchPlan launch_plan(const Problem& problem, const Config& config) const override;
  WorkCounts work(const Problem& problem) const override;
  std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const override;
  /// The reference kernel or config. Throws ktune::Error(kBadInput) for `verify = false`.
  ReferenceSpec reference(const Problem& problem) const override;
  /// A user kernel has no CPU reference: throws ktune::Error(kBadInput).
  HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const override;
  /// The first seed, else every parameter's first value.
  Config default_config(const Problem& problem) const override;

 private:
  /// Why a `[[prune]]` of the problem's dtype and shape leaves `config` out, or nullopt (none of
  /// them, a shape without every dim, or the config is kept).
  std::optional<std::string> prune_rejection(const Problem& problem, const Config& config) const;
  /// Whether the problem gives every dim (a space's listing names configs without a shape).
  bool shaped(const Problem& problem) const;
  /// Binds the problem (and the config, when given) to the evaluator's slots; callers hold mu_.
  void bind(const Problem& problem, const Config* config) const;
  int64_t eval_int(const UserExpression& e) const;
  /// An input's fill with its expressions evaluated for the bound problem; callers hold mu_.
  BufferFill fill_of(const UserArg& a) const;
  /// A data reference's file of buffer `arg` for the problem: DATA/DTYPE/SHAPE/ARG.bin.
  std::string data_file(const Problem& problem, const std::string& arg) const;
  std::string name_expression(const std::string& function, const Config* config, DType dtype) const;
  /// `cubin` set: the launch of that prebuilt cubin (its entry, threads and shared memory).
  KernelLaunch make_launch(const UserLaunch& l, const Config* config, DType dtype, bool reference,
                           const UserCubin* cubin = nullptr) const;
  /// The prebuilt cubin that serves (problem, config), or null (not prebuilt, or no such cubin);
  /// a pending one as it has arrived, if it has.
  const UserCubin* cubin_of(const Problem& problem, const Config& config) const;
  /// The same for the problem bound now; callers hold mu_.
  const UserCubin* bound_cubin(const Config& config, DType dtype) const;
  /// `c`, or what it became when it was pending and has arrived; callers hold mu_.
  const UserCubin* settled(const UserCubin* c) const;
  /// Waits (without mu_) for pending cubin `c` to be compiled or to fail, and keeps what it became.
  const UserCubin* arrive(const UserCubin& c) const;
  /// The launches of `config` (the description's, or its cubin's) into `plan`, with the scratch
  /// buffers a cubin's appended pointers need; callers hold mu_ with the config bound.
  void add_launches(LaunchPlan& plan, const Config& config, DType dtype, bool reference) const;
  std::vector<TensorSpec> tensors(const Problem& problem, bool reference) const;

  UserKernelDescription d_;
  std::string source_name_;
  mutable std::mutex mu_;
  mutable ExpressionEvaluator ev_;
  std::map<const UserExpression*, std::size_t> index_;  // each expression of d_ -> its index in ev_
  /// Pending cubins of d_ (by address) -> what the index listed once they were compiled; under mu_.
  mutable std::map<const UserCubin*, UserCubin> arrived_;
};

}  // namespace ktune::kernel_templates
