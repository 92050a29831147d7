#include "tuner/inputs/shape_set.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/toml_read.hpp"
#include "ktune/error.hpp"

#ifndef KTUNE_DEFAULT_CONFIGS_DIR
#error "KTUNE_DEFAULT_CONFIGS_DIR must be defined by the build"
#endif

namespace ktune::tuner {

using toml_read::fail_at;
using toml_read::line_of;

std::string NamedShape::canonical() const {
  std::string out;
  for (const auto& [name, value] : dims) out += fmt::format("{}{}={}", out.empty() ? "" : ",", name, value);
  return out;
}

int64_t NamedShape::at(std::string_view name) const {
  for (const auto& [n, v] : dims) {
    if (n == name) return v;
  }
  throw Error(ErrorKind::kBadInput, fmt::format("shape {} has no dimension '{}'", canonical(), name));
}

NamedShape NamedShape::normalized(std::span<const std::string> want) const {
  NamedShape out{label, {}};
  for (const auto& w : want) out.dims.emplace_back(w, at(w));
  for (const auto& [n, v] : dims) {
    if (std::find(want.begin(), want.end(), n) == want.end()) {
      throw Error(ErrorKind::kBadInput, fmt::format("shape {} has unknown dimension '{}'", canonical(), n));
    }
  }
  return out;
}

std::filesystem::path configs_dir() {
  if (const char* env = std::getenv("KTUNE_CONFIGS_DIR"); env != nullptr && *env != '\0') return env;
  // An installed ktune (<prefix>/bin/ktune) reads <prefix>/share/ktune/configs, so it works when the
  // checkout it was built from is gone or has moved on; a build-tree binary has no such folder.
  static const std::filesystem::path installed = [] {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::filesystem::path();
    const std::filesystem::path dir =
        (exe.parent_path() / KTUNE_INSTALLED_CONFIGS_FROM_BIN).lexically_normal();
    return std::filesystem::is_directory(dir / "spaces", ec) ? dir : std::filesystem::path();
  }();
  if (!installed.empty()) return installed;
  return KTUNE_DEFAULT_CONFIGS_DIR;
}

std::filesystem::path resolve_config_file(std::string_view name_or_path, std::string_view subdir) {
  const std::string s(name_or_path);
  std::error_code ec;
  if (s.find('/') != std::string::npos || s.ends_with(".toml") || std::filesystem::is_regular_file(s, ec))
    return s;
  return configs_dir() / subdir / (s + ".toml");
}

std::vector<std::string> config_names(std::string_view subdir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(configs_dir() / subdir, ec)) {
    if (entry.path().extension() == ".toml") out.push_back(entry.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::filesystem::path named_config_file(std::string_view name, std::string_view subdir) {
  const auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  };
  const bool is_name = !name.empty() && name.size() <= 100 && name.front() != '.' &&
                       std::all_of(name.begin(), name.end(), is_name_char) &&
                       name.find("..") == std::string_view::npos && !name.ends_with(".toml");
  if (!is_name) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("'{}' is not a name of the configs' {} (letters, digits, '-', '_', '.'; a name, "
                            "not a path or a file name)",
                            name, subdir));
  }
  const std::filesystem::path file = configs_dir() / subdir / (std::string(name) + ".toml");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw Error(ErrorKind::kBadInput, fmt::format("no {} named '{}' in the configs (known: {})", subdir, name,
                                                  fmt::join(config_names(subdir), ", ")));
  }
  return file;
}

ShapeSet load_shape_set(const std::filesystem::path& file) {
  const std::string f = file.string();
  const toml::table root = toml_read::parse_toml_file(file);
  toml_read::reject_unknown_keys(root, {"kernel", "model", "source", "dims", "sweep", "layer"}, f,
                                 "a shape set");
  ShapeSet set;
  set.name = file.stem().string();
  set.source = f;
  set.kernel = toml_read::require_string(root, "kernel", f, 1, "the shape set");
  if (const toml::node* m = root.get("model")) set.model = m->value<std::string>().value_or("");
  set.dims = toml_read::require_string_array(root, "dims", f, 1, "the shape set");

  std::vector<std::pair<std::string, std::vector<int64_t>>> sweep;
  if (const toml::node* s = root.get("sweep")) {
    if (!s->is_table()) fail_at(f, line_of(*s), "'sweep' must be a table of dimension = [values]");
    for (const auto& [name, node] : toml_read::entries_in_order(*s->as_table())) {
      if (std::find(set.dims.begin(), set.dims.end(), name) == set.dims.end()) {
        fail_at(f, line_of(*node), fmt::format("sweep names unknown dimension '{}'", name));
      }
      auto values = toml_read::require_integer_list(*node, f, "sweep " + name);
      for (int64_t v : values) {
        if (v < 1) fail_at(f, line_of(*node), fmt::format("sweep {} value {} is not positive", name, v));
      }
      sweep.emplace_back(name, std::move(values));
    }
  }
  const toml::node* layers = root.get("layer");
  if (layers == nullptr || !layers->is_array() || layers->as_array()->empty()) {
    fail_at(f, layers ? line_of(*layers) : 1, "a shape set needs at least one [[layer]]");
  }
  std::set<std::string> layer_names;
  for (const toml::node& node : *layers->as_array()) {
    const toml::table* layer = node.as_table();
    if (layer == nullptr) fail_at(f, line_of(node), "'layer' must be an array of tables ([[layer]])");
    const uint32_t line = line_of(node);
    const std::string name = toml_read::require_string(*layer, "name", f, line, "a [[layer]]");
    if (!layer_names.insert(name).second) fail_at(f, line, fmt::format("layer '{}' is listed twice", name));
    std::vector<std::pair<std::string, int64_t>> fixed;
    for (auto&& [key, value] : *layer) {
      if (key.str() == "name" || key.str() == "note") continue;
      if (std::find(set.dims.begin(), set.dims.end(), key.str()) == set.dims.end()) {
        fail_at(f, line_of(value), fmt::format("layer '{}' names unknown dimension '{}'", name, key.str()));
      }
      const int64_t v = toml_read::require_integer(value, f, fmt::format("layer '{}' {}", name, key.str()));
      if (v < 1)
        fail_at(f, line_of(value), fmt::format("layer '{}' {} = {} is not positive", name, key.str(), v));
      fixed.emplace_back(std::string(key.str()), v);
    }
    for (const auto& d : set.dims) {
      const bool in_layer =
          std::any_of(fixed.begin(), fixed.end(), [&](const auto& p) { return p.first == d; });
      const bool in_sweep =
          std::any_of(sweep.begin(), sweep.end(), [&](const auto& p) { return p.first == d; });
      if (in_layer == in_sweep) {
        fail_at(f, line,
                fmt::format("layer '{}': dimension '{}' must be given by exactly one of the layer and the "
                            "sweep",
                            name, d));
      }
    }
    // Cartesian product of the sweep, the last swept dimension varying fastest.
    std::vector<size_t> idx(sweep.size(), 0);
    while (true) {
      NamedShape shape{set.name + "." + name, {}};
      for (const auto& d : set.dims) {
        for (const auto& [n, v] : fixed) {
          if (n == d) shape.dims.emplace_back(d, v);
        }
        for (size_t s = 0; s < sweep.size(); ++s) {
          if (sweep[s].first != d) continue;
          shape.dims.emplace_back(d, sweep[s].second[idx[s]]);
        }
      }
      for (size_t s = 0; s < sweep.size(); ++s)
        shape.label += fmt::format(".{}{}", sweep[s].first, sweep[s].second[idx[s]]);
      set.shapes.push_back(std::move(shape));
      size_t s = sweep.size();
      while (s > 0 && ++idx[s - 1] == sweep[s - 1].second.size()) idx[--s] = 0;
      if (s == 0) break;
    }
  }
  return set;
}

}  // namespace ktune::tuner
