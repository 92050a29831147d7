#pragma once
/// A kernel's config space, read from configs/spaces/<kernel>.toml (format: docs/config-spaces.md).
/// A kernel family may have several templates (the tiled GEMM and the GEMV); each declares its
/// tunable parameters (value lists, ranges, powers of two), derived values and constraints, which
/// are muParser expressions over the parameters, the problem dimensions, `elem_bytes` and the device
/// limits. enumerate() walks every template's Cartesian product in a fixed order (templates in file
/// order; parameters in declaration order, the last varying fastest) and keeps the points every
/// constraint accepts, counting for each pruned point the first constraint that rejected it.
///
/// A space holds search choices only. For a kernel with templates (kernel_templates/spec_registry.hpp)
/// the templates' specs are the description: the dimensions, each template's parameter names and
/// order, the layouts it serves and the canonical names come from its spec, and the spec's hard
/// rules (KernelSpec::tuning_rejection) filter the points after the constraints, counted as the
/// pseudo-constraint "spec". A space of a kernel without templates (tests) states `dims` and a
/// name `pattern` itself.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "kernel_templates/kernel_spec.hpp"
#include "tuner/space/problem_context.hpp"

namespace ktune::tuner {

/// The most library algorithms a space may ask for per key.
inline constexpr int64_t kMaxLibraryAlgorithms = 64;

/// One tunable parameter and its values, in the order written.
struct ParamSpec {
  std::string name;
  std::vector<int64_t> values;
  uint32_t line = 0;
};

/// A named expression: a derived value or a constraint.
struct ExprSpec {
  std::string name;
  std::string text;
  uint32_t line = 0;
};

/// One template of the kernel family and its part of the space.
struct TemplateSpace {
  std::string name;  ///< template id, e.g. "tiled"; Config::template_name()
  /// The template's spec (its kernel's registered template of this name); null for a kernel
  /// without templates, whose space gives `pattern` and `dims` itself.
  const kernel_templates::KernelSpec* spec = nullptr;
  std::string pattern;               ///< name pattern, e.g. "{BLOCK_M}x{BLOCK_N}" (no spec only)
  std::vector<std::string> layouts;  ///< layouts searched: the spec's, or fewer; empty = every layout
  uint32_t line = 0;
  std::vector<ParamSpec> params;  ///< template-argument order
  std::vector<ExprSpec> derived;  ///< evaluated in order; each may use those before it
  std::vector<ExprSpec> constraints;
  /// Configs every strategy evaluates first (`seeds = [...]`), in file order; each is a point of
  /// the template, but a shape's constraints may still reject it.
  std::vector<Config> seeds;

  /// Points in the Cartesian product of the parameter values.
  uint64_t size() const;
};

/// How many points one constraint pruned. A template skipped for the problem's dtype or layout
/// counts its whole product under the pseudo-constraint "dtype" or "layout"; the points its spec
/// refuses (after the constraints) count under "spec".
struct PruneCount {
  std::string template_name;
  std::string constraint;
  std::string expression;
  uint32_t line = 0;
  uint64_t count = 0;  ///< points for which this was the first failing constraint
};

/// The result of enumerating a space for one problem.
struct Enumeration {
  std::vector<Config> configs;        ///< the kept points, in enumeration order
  uint64_t total = 0;                 ///< points before pruning
  uint64_t pruned = 0;                ///< total - configs.size()
  std::vector<PruneCount> pruned_by;  ///< every constraint of every template, in file order
  /// The templates' seeds the constraints (and the layout) keep for this problem, templates and
  /// seeds in file order; each is also in `configs`. Strategies propose them first.
  std::vector<Config> seeds;
  /// Seeds dropped for this problem (a constraint or the layout rejects them; the tuning loop adds
  /// those the template's spec rejects). Never an error.
  uint64_t seed_rejected = 0;
  /// The first reason a template's spec gave for refusing a point ("" when none did): an empty
  /// space names it, since the spec's reasons (a user kernel's buffer size or fill for this shape)
  /// are not constraints the summary can name.
  std::string first_spec_rejection;

  /// One line: "kept 412 of 10125; pruned by tiled.smem_fits 300, tiled.threads_fit 12, ...;
  /// seeds 5, seed_rejected 3" (the seed part only when the space has seeds).
  std::string summary() const;
};

class ConfigSpace {
 public:
  /// Largest template a space may declare; a bigger product is almost surely a mistake and would
  /// take seconds to enumerate per shape (~50 ns a point and constraint).
  static constexpr uint64_t kMaxTemplatePoints = uint64_t{1} << 24;

  /// Reads and checks a space file, or a user kernel's description (NAME.toml, docs/byo.md), whose
  /// [[template]] is its space. Throws ktune::Error(kBadInput) with "FILE:LINE:" and the bad
  /// part named for bad TOML, an unknown key, a bad value list, a bad or unknown name in an
  /// expression, a bad name pattern, an empty template or a bad default config.
  static ConfigSpace load(const std::filesystem::path& path);
  /// load() from text; `source_name` stands for the file name in messages.
  static ConfigSpace parse(std::string_view toml_text, const std::string& source_name);

  const std::string& kernel() const { return kernel_; }
  const std::vector<std::string>& dims() const { return dims_; }
  const std::string& source_name() const { return source_; }
  const std::string& description() const { return description_; }
  /// How many of a vendor library's algorithms (cuBLASLt's heuristic, best first) join the search
  /// of each key the library serves (tuner/library/library_candidates.hpp); 0 when the file says none.
  size_t library_algorithms() const { return library_algorithms_; }
  const std::vector<TemplateSpace>& templates() const { return templates_; }
  /// The template named `name`; throws ktune::Error(kBadInput) when there is none.
  const TemplateSpace& template_space(std::string_view name) const;
  /// Points in all templates before pruning.
  uint64_t size() const;

  /// Every point that satisfies all constraints, and its template's spec, for `context`. Throws
  /// ktune::Error(kBadInput) for a context whose dims differ from dims(), for a space with templates
  /// and a context without a dtype, and when no point is kept (the message gives the prune counts
  /// and the space file).
  Enumeration enumerate(const ProblemContext& context) const;

  /// Whether template `tmpl` serves `layout` (it lists none, the layout is empty, or it is listed).
  static bool serves_layout(const TemplateSpace& tmpl, std::string_view layout);

  /// The first constraint (as "template.name", "template.dtype" / "template.layout" for a dtype or
  /// layout it does not serve, "template.spec" for the spec's rules) that `config` fails in `context`, or
  /// nullopt when it passes all. Throws ktune::Error(kBadInput) when `config` is not a point of this space.
  std::optional<std::string> first_failing_constraint(const Config& config,
                                                      const ProblemContext& context) const;
  /// The derived values of `config` in `context`, in declaration order (e.g. threads, smem bytes).
  std::vector<std::pair<std::string, double>> derived_values(const Config& config,
                                                             const ProblemContext& context) const;

  /// Whether `config` names a template of this space, has its parameters in order, and each value
  /// is one of the listed values.
  bool contains(const Config& config) const;

  /// The canonical name of `config`, e.g. gemm.bf16.nt.128x128x32.w2x2.s3.sk1: its spec's
  /// (KernelSpec::canonical_name), or `kernel.dtype[.layout].<pattern>` without one. Throws
  /// ktune::Error(kBadInput) for a config of an unknown template.
  std::string canonical_name(const Config& config, DType dtype, std::string_view layout = {}) const;

 private:
  friend struct SpaceReader;
  std::string source_;
  std::string kernel_;
  std::string description_;
  size_t library_algorithms_ = 0;
  std::vector<std::string> dims_;
  std::vector<TemplateSpace> templates_;
};

}  // namespace ktune::tuner
