#include "tuner/inputs/preset.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/expression_evaluator.hpp"
#include "core/toml_read.hpp"
#include "ktune/error.hpp"
#include "tuner/space/problem_context.hpp"

namespace ktune::tuner {

using toml_read::fail_at;
using toml_read::line_of;

namespace {

std::vector<NamedShape> select(const toml::table& sel, const std::string& file, Preset& preset) {
  const uint32_t line = line_of(sel);
  toml_read::reject_unknown_keys(sel, {"shapes", "layers", "where"}, file, "a [[select]]");
  const std::string set_name = toml_read::require_string(sel, "shapes", file, line, "a [[select]]");
  const auto path = resolve_config_file(set_name, "shapes");
  if (!std::filesystem::exists(path)) {
    fail_at(file, line_of(*sel.get("shapes")),
            fmt::format("shape set '{}' not found ({})", set_name, path.string()));
  }
  const ShapeSet set = load_shape_set(path);
  if (set.kernel != preset.kernel) {
    fail_at(file, line,
            fmt::format("shape set '{}' is for kernel '{}', the preset for '{}'", set_name, set.kernel,
                        preset.kernel));
  }
  if (preset.dims.empty()) preset.dims = set.dims;

  std::vector<std::string> layers;
  if (sel.contains("layers"))
    layers = toml_read::require_string_array(sel, "layers", file, line, "a [[select]]");
  std::optional<ExpressionEvaluator> filter;
  if (const toml::node* where = sel.get("where")) {
    if (!where->is_string()) fail_at(file, line_of(*where), "'where' must be a string expression");
    filter.emplace(preset.dims);
    try {
      filter->add(where->value<std::string>().value());
    } catch (const ExpressionError& e) {
      fail_at(file, line_of(*where), fmt::format("bad 'where' filter: {}", e.what()));
    }
  }
  std::vector<NamedShape> out;
  std::set<std::string> layers_seen;
  for (const auto& shape : set.shapes) {
    if (!layers.empty()) {
      // Labels are "<set>.<layer>.<sweep...>".
      const std::string rest = shape.label.substr(set.name.size() + 1);
      const std::string layer = rest.substr(0, rest.find('.'));
      if (std::find(layers.begin(), layers.end(), layer) == layers.end()) continue;
      layers_seen.insert(layer);
    }
    const NamedShape s = shape.normalized(preset.dims);
    if (filter) {
      for (size_t i = 0; i < s.dims.size(); ++i) filter->set(i, static_cast<double>(s.dims[i].second));
      if (filter->eval(0) == 0) continue;
    }
    out.push_back(s);
  }
  for (const auto& l : layers) {
    if (!layers_seen.contains(l)) {
      fail_at(file, line_of(*sel.get("layers")),
              fmt::format("shape set '{}' has no layer '{}'", set_name, l));
    }
  }
  if (out.empty()) fail_at(file, line, fmt::format("this [[select]] of '{}' selects no shape", set_name));
  return out;
}

}  // namespace

std::vector<std::string> list_presets() { return config_names("presets"); }

Preset load_preset(std::string_view name_or_path) {
  const auto path = resolve_config_file(name_or_path, "presets");
  if (!std::filesystem::exists(path)) {
    std::string known;
    for (const auto& p : list_presets()) known += (known.empty() ? "" : ", ") + p;
    throw Error(ErrorKind::kBadInput,
                fmt::format("unknown preset '{}' (no {}; known: {})", name_or_path, path.string(), known));
  }
  const std::string f = path.string();
  const toml::table root = toml_read::parse_toml_file(path);
  toml_read::reject_unknown_keys(
      root, {"description", "kernel", "dtypes", "layout", "strategy", "budget", "seed", "select"}, f,
      "a preset");
  Preset p;
  p.name = path.stem().string();
  p.source = f;
  if (const toml::node* d = root.get("description")) p.description = d->value<std::string>().value_or("");
  p.kernel = toml_read::require_string(root, "kernel", f, 1, "the preset");
  for (const auto& dt : toml_read::require_string_array(root, "dtypes", f, 1, "the preset")) {
    try {
      p.dtypes.push_back(dtype_from_string(dt));
    } catch (const Error& e) {
      fail_at(f, line_of(*root.get("dtypes")), e.what());
    }
  }
  if (root.contains("layout")) p.layout = toml_read::require_string(root, "layout", f, 1, "the preset");
  const std::string strategy = toml_read::require_string(root, "strategy", f, 1, "the preset");
  try {
    p.strategy = parse_strategy(strategy);
  } catch (const Error& e) {
    fail_at(f, line_of(*root.get("strategy")), e.what());
  }
  if (const toml::node* b = root.get("budget")) {
    const int64_t budget = toml_read::require_integer(*b, f, "budget");
    if (budget < 0) fail_at(f, line_of(*b), fmt::format("budget {} is negative", budget));
    p.budget = static_cast<size_t>(budget);
  }
  if (const toml::node* s = root.get("seed"))
    p.seed = static_cast<uint64_t>(toml_read::require_integer(*s, f, "seed"));

  const toml::node* sels = root.get("select");
  if (sels == nullptr || !sels->is_array() || sels->as_array()->empty()) {
    fail_at(f, sels ? line_of(*sels) : 1, "a preset needs at least one [[select]] of shapes");
  }
  std::set<std::string> seen;
  for (const toml::node& node : *sels->as_array()) {
    if (!node.is_table()) fail_at(f, line_of(node), "'select' must be an array of tables ([[select]])");
    for (auto& shape : select(*node.as_table(), f, p)) {
      if (seen.insert(shape.canonical()).second) p.shapes.push_back(std::move(shape));
    }
  }
  return p;
}

}  // namespace ktune::tuner
