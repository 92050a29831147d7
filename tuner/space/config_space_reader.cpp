// Reading a config space file (docs/config-spaces.md) into a ConfigSpace, checking everything that
// can be checked without a problem shape.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/param_values.hpp"
#include "core/toml_read.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"
#include "tuner/loop/detail/template_evaluator.hpp"
#include "tuner/space/canonical_name.hpp"
#include "tuner/space/config_space.hpp"

namespace ktune::tuner {

using toml_read::fail_at;
using toml_read::line_of;

/// Reads one space file; a friend of ConfigSpace.
struct SpaceReader {
  std::string file;
  ConfigSpace space;
  std::set<std::string> names;  // every name in the current template's expression scope
  std::vector<const kernel_templates::KernelSpec*> specs;  // the kernel's templates; none for a test kernel

  static std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ", ") + (p.empty() ? std::string("\"\"") : p);
    return out;
  }

  /// The spec of template `name`; an error naming the kernel's templates when it has none of that name.
  const kernel_templates::KernelSpec* spec_of(const std::string& name, uint32_t line) {
    if (specs.empty()) return nullptr;
    std::vector<std::string> known;
    for (const auto* s : specs) {
      if (s->variant() == name) return s;
      known.emplace_back(s->variant());
    }
    fail_at(file, line,
            fmt::format("kernel '{}' has no template '{}' (its templates: {})", space.kernel_, name,
                        join(known)));
  }

  /// A template of a kernel with templates takes its facts from the spec: the name pattern (the
  /// spec names configs), the parameters (the spec's, in template-argument order) and the layouts
  /// (the spec's unless the space searches fewer).
  void check_against_spec(const toml::table& t, TemplateSpace& tmpl, const std::string& what) {
    const auto& spec = *tmpl.spec;
    if (const toml::node* p = t.get("pattern")) {
      fail_at(file, line_of(*p),
              fmt::format("{}: the template's spec names its configs: remove 'pattern'", what));
    }
    std::vector<std::string> params;
    for (const auto& p : tmpl.params) params.push_back(p.name);
    if (params != spec.param_names()) {
      fail_at(file, line_of(*t.get("params")),
              fmt::format("{}: [template.params] must list the template's parameters in template-argument "
                          "order: {} (got {})",
                          what, join(spec.param_names()), join(params)));
    }
    const auto served = spec.layouts();
    if (!t.contains("layouts")) {
      tmpl.layouts = served;
      return;
    }
    for (const auto& l : tmpl.layouts) {
      if (std::find(served.begin(), served.end(), l) == served.end()) {
        fail_at(file, line_of(*t.get("layouts")),
                fmt::format("{}: layout '{}' is not served by the template (it serves {})", what, l,
                            join(served)));
      }
    }
  }

  static bool is_identifier(std::string_view s) {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
  }

  void declare(const std::string& name, uint32_t line, std::string_view what) {
    if (!is_identifier(name))
      fail_at(file, line, fmt::format("{} name '{}' is not an identifier", what, name));
    if (!names.insert(name).second) {
      fail_at(file, line,
              fmt::format("{} name '{}' is already used (by a dimension, a device limit, a parameter "
                          "or a derived value)",
                          what, name));
    }
  }

  std::vector<int64_t> read_values(const std::string& name, const toml::node& node) {
    return toml_read::read_param_values(node, file, fmt::format("parameter '{}'", name),
                                        ConfigSpace::kMaxTemplatePoints);
  }

  std::vector<ExprSpec> read_exprs(const toml::table& tmpl, std::string_view key, std::string_view what,
                                   bool declares) {
    std::vector<ExprSpec> out;
    const toml::node* node = tmpl.get(key);
    if (node == nullptr) return out;
    const toml::table* t = node->as_table();
    if (t == nullptr)
      fail_at(file, line_of(*node), fmt::format("'{}' must be a table of name = \"expression\"", key));
    for (const auto& [name, value] : toml_read::entries_in_order(*t)) {
      if (!value->is_string()) {
        fail_at(file, line_of(*value), fmt::format("{} '{}' must be a string expression", what, name));
      }
      if (declares) {
        declare(name, line_of(*value), what);
      } else if (!is_identifier(name)) {
        fail_at(file, line_of(*value), fmt::format("{} name '{}' is not an identifier", what, name));
      }
      out.push_back({name, value->value<std::string>().value(), line_of(*value)});
    }
    return out;
  }

  TemplateSpace read_template(const toml::table& t) {
    const uint32_t line = line_of(t);
    toml_read::reject_unknown_keys(
        t, {"name", "pattern", "layouts", "params", "derived", "constraints", "seeds"}, file,
        "a [[template]]");
    TemplateSpace tmpl;
    tmpl.line = line;
    tmpl.name = toml_read::require_string(t, "name", file, line, "a [[template]]");
    if (!is_identifier(tmpl.name))
      fail_at(file, line, fmt::format("template name '{}' is not an identifier", tmpl.name));
    for (const auto& other : space.templates_) {
      if (other.name == tmpl.name)
        fail_at(file, line, fmt::format("template '{}' is declared twice", tmpl.name));
    }
    const std::string what = fmt::format("template '{}'", tmpl.name);
    tmpl.spec = spec_of(tmpl.name, line);
    if (tmpl.spec == nullptr) tmpl.pattern = toml_read::require_string(t, "pattern", file, line, what);
    if (t.contains("layouts")) tmpl.layouts = toml_read::require_string_array(t, "layouts", file, line, what);

    names.clear();
    for (const auto& d : space.dims_) names.insert(d);
    for (auto v : kContextVariables) names.emplace(v);

    const toml::node* params = t.get("params");
    if (params == nullptr || params->as_table() == nullptr || params->as_table()->empty()) {
      fail_at(file, params ? line_of(*params) : line,
              fmt::format("{} needs a non-empty [template.params] table", what));
    }
    for (const auto& [name, node] : toml_read::entries_in_order(*params->as_table())) {
      declare(name, line_of(*node), "parameter");
      tmpl.params.push_back({name, read_values(name, *node), line_of(*node)});
    }
    tmpl.derived = read_exprs(t, "derived", "derived value", true);
    tmpl.constraints = read_exprs(t, "constraints", "constraint", false);

    if (tmpl.spec != nullptr) {
      check_against_spec(t, tmpl, what);
    } else {
      std::vector<std::string> param_names;
      for (const auto& p : tmpl.params) param_names.push_back(p.name);
      if (auto why = check_name_pattern(tmpl.pattern, param_names); !why.empty()) {
        fail_at(file, line_of(*t.get("pattern")),
                fmt::format("{}: bad name pattern '{}': {}", what, tmpl.pattern, why));
      }
    }
    if (tmpl.size() > ConfigSpace::kMaxTemplatePoints) {
      fail_at(file, line,
              fmt::format("{} has {} points, more than the limit of {}", what, tmpl.size(),
                          ConfigSpace::kMaxTemplatePoints));
    }
    if (const toml::node* seeds = t.get("seeds")) read_seeds(tmpl, *seeds);
    detail::TemplateEvaluator check(tmpl, space.dims_, file);  // compiles every expression once
    return tmpl;
  }

  /// A config of `tmpl` written as { PARAM = value, ... }: every parameter, each value one of its list.
  Config read_point(const TemplateSpace& tmpl, const toml::node& node, const std::string& what) {
    const toml::table* t = node.as_table();
    if (t == nullptr)
      fail_at(file, line_of(node), fmt::format("{} must be a table of parameter = value", what));
    for (auto&& [key, v] : *t) {
      const std::string_view name = key.str();  // clang 14 cannot capture a structured binding
      if (std::none_of(tmpl.params.begin(), tmpl.params.end(),
                       [&](const auto& p) { return p.name == name; })) {
        fail_at(file, line_of(v), fmt::format("{} names unknown parameter '{}'", what, name));
      }
    }
    std::vector<Config::Param> params;
    for (const auto& p : tmpl.params) {
      const toml::node* v = t->get(p.name);
      if (v == nullptr) fail_at(file, line_of(node), fmt::format("{} lacks parameter '{}'", what, p.name));
      const int64_t value = toml_read::require_integer(*v, file, what + " " + p.name);
      if (std::find(p.values.begin(), p.values.end(), value) == p.values.end()) {
        fail_at(file, line_of(*v),
                fmt::format("{}: {} = {} is not one of the parameter's values", what, p.name, value));
      }
      params.emplace_back(p.name, value);
    }
    return Config(tmpl.name, std::move(params));
  }

  /// `seeds = [ { PARAM = value, ... }, ... ]`: configs every strategy evaluates first.
  void read_seeds(TemplateSpace& tmpl, const toml::node& node) {
    const toml::array* arr = node.as_array();
    if (arr == nullptr)
      fail_at(file, line_of(node), "'seeds' must be an array of tables { parameter = value, ... }");
    for (size_t i = 0; i < arr->size(); ++i) {
      const std::string what = fmt::format("seed {} of template '{}'", i + 1, tmpl.name);
      Config seed = read_point(tmpl, *arr->get(i), what);
      if (std::find(tmpl.seeds.begin(), tmpl.seeds.end(), seed) != tmpl.seeds.end())
        fail_at(file, line_of(*arr->get(i)), fmt::format("{} repeats an earlier seed", what));
      tmpl.seeds.push_back(std::move(seed));
    }
  }

  void read(const toml::table& root) {
    toml_read::reject_unknown_keys(root, {"kernel", "dims", "description", "library_algorithms", "template"},
                                   file, "a space file");
    space.source_ = file;
    space.kernel_ = toml_read::require_string(root, "kernel", file, 1, "the space file");
    if (!is_identifier(space.kernel_))
      fail_at(file, line_of(*root.get("kernel")), "kernel must be an identifier");
    if (const toml::node* d = root.get("description"))
      space.description_ = d->value<std::string>().value_or("");
    if (const toml::node* lib = root.get("library_algorithms")) {
      const std::optional<int64_t> n = lib->value<int64_t>();
      if (!lib->is_integer() || !n || *n < 0 || *n > kMaxLibraryAlgorithms) {
        fail_at(file, line_of(*lib),
                fmt::format("library_algorithms must be an integer from 0 to {}", kMaxLibraryAlgorithms));
      }
      space.library_algorithms_ = static_cast<size_t>(*n);
    }
    specs = kernel_templates::specs_of(space.kernel_);
    const uint32_t dims_line = root.contains("dims") ? line_of(*root.get("dims")) : 1;
    if (specs.empty()) {
      space.dims_ = toml_read::require_string_array(root, "dims", file, 1, "the space file");
    } else {
      space.dims_ = kernel_templates::find_kernel(space.kernel_)->dims;
      if (root.contains("dims") &&
          toml_read::require_string_array(root, "dims", file, 1, "the space file") != space.dims_) {
        fail_at(file, dims_line,
                fmt::format("kernel '{}' has the dimensions {} (leave 'dims' out: its templates give them)",
                            space.kernel_, join(space.dims_)));
      }
    }
    names.clear();
    for (auto v : kContextVariables) names.emplace(v);
    for (const auto& d : space.dims_) declare(d, dims_line, "dimension");

    const toml::node* templates = root.get("template");
    const toml::array* arr = templates ? templates->as_array() : nullptr;
    if (arr == nullptr || arr->empty()) {
      fail_at(file, templates ? line_of(*templates) : 1,
              "the space file has no [[template]] (an empty space)");
    }
    for (const toml::node& t : *arr) {
      if (!t.is_table()) fail_at(file, line_of(t), "'template' must be an array of tables ([[template]])");
      space.templates_.push_back(read_template(*t.as_table()));
    }
  }
};

namespace {

/// A user kernel's description (docs/byo.md) is also its space: its [[template]] is a space
/// template. The keys only the description has are set aside; `kernel` is the file's name.
toml::table as_space(toml::table root, const std::filesystem::path& path) {
  if (!root.contains("arg") && !root.contains("launch")) return root;
  for (const char* key : {"dtypes", "arg", "launch", "reference", "verify", "work", "prebuilt"})
    root.erase(key);
  if (!root.contains("kernel")) root.insert("kernel", path.stem().string());
  return root;
}

}  // namespace

ConfigSpace ConfigSpace::parse(std::string_view toml_text, const std::string& source_name) {
  SpaceReader reader{source_name, {}, {}, {}};
  reader.read(as_space(toml_read::parse_toml(toml_text, source_name), source_name));
  return std::move(reader.space);
}

ConfigSpace ConfigSpace::load(const std::filesystem::path& path) {
  SpaceReader reader{path.string(), {}, {}, {}};
  reader.read(as_space(toml_read::parse_toml_file(path), path));
  return std::move(reader.space);
}

}  // namespace ktune::tuner
