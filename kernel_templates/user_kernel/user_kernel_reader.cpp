// Reading a user kernel folder's NAME.toml (docs/byo.md) into a UserKernelDescription, checking
// everything that can be checked without a shape.
#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "core/expression_evaluator.hpp"
#include "core/param_values.hpp"
#include "core/toml_read.hpp"
#include "kernel_templates/user_kernel/kernel_source_scan.hpp"
#include "kernel_templates/user_kernel/user_kernel_description.hpp"
#include "kernel_templates/user_kernel/user_kernel_fill_reader.hpp"
#include "kernel_templates/user_kernel/user_kernel_prebuilt_reader.hpp"
#include "kernel_templates/user_kernel/user_kernel_prune_reader.hpp"
#include "kernel_templates/user_kernel/user_kernel_reference_reader.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using toml_read::fail_at;
using toml_read::line_of;

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw Error(ErrorKind::kBadInput, fmt::format("cannot read '{}'", path.string()), "", path.string());
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Reader final : DescriptionReaderContext {
  std::string file;  // the TOML file, as messages name it
  UserKernelDescription d;
  std::optional<ExpressionEvaluator> symbols;  // dims, params, elem_bytes: checks every expression
  std::filesystem::path folder;                // where the TOML file is (a prebuilt's cubins are beside it)
  bool inputs_from_files = false;              // `[reference] data`: every input is read from a file
  bool prebuilt = false;                       // the description has a [prebuilt] table

  [[noreturn]] void fail(uint32_t line, std::string_view field, const std::string& message) override {
    fail_at(file, line, fmt::format("{}: {}", field, message));
  }

  /// reject_unknown_keys, with a hint for a top-level key written after a table header (TOML puts
  /// it into that table).
  void reject_unknown(const toml::table& t, std::initializer_list<std::string_view> allowed,
                      std::string_view what) override {
    for (const char* root : {"verify", "description", "dims", "dtypes"}) {
      const toml::node* n = t.get(root);
      if (n != nullptr && std::find(allowed.begin(), allowed.end(), root) == allowed.end()) {
        fail(line_of(*n), root,
             fmt::format("written inside {}: a top-level key goes before the first [table] of the file",
                         what));
      }
    }
    toml_read::reject_unknown_keys(t, allowed, file, what);
  }

  /// An expression field: a string or a number; compiled once against the symbols.
  UserExpression expression(const toml::node& node, const std::string& field) override {
    UserExpression e{"", field, line_of(node)};
    if (node.is_string()) {
      e.text = node.value<std::string>().value();
    } else if (node.is_integer()) {
      e.text = std::to_string(node.value<int64_t>().value());
    } else if (node.is_floating_point()) {
      e.text = fmt::format("{}", node.value<double>().value());
    } else {
      fail(e.line, field, "must be an expression (a string such as \"rows * cols\") or a number");
    }
    try {
      symbols->add(e.text);
    } catch (const ExpressionError& err) {
      fail(e.line, field,
           fmt::format("{} (known symbols: the dimensions, the template parameters and elem_bytes)",
                       err.what()));
    }
    return e;
  }

  const std::vector<std::string>& dimensions() const override { return d.dims; }

  std::vector<UserExpression> expressions(const toml::node& node, const std::string& field) {
    std::vector<UserExpression> out;
    if (const toml::array* arr = node.as_array()) {
      if (arr->empty() || arr->size() > 3)
        fail(line_of(node), field, "must list 1 to 3 expressions (x, y, z)");
      for (std::size_t i = 0; i < arr->size(); ++i)
        out.push_back(expression(*arr->get(i), fmt::format("{}[{}]", field, i)));
    } else {
      out.push_back(expression(node, field));
    }
    return out;
  }

  /// The shipped spaces' reader of parameter values (core/param_values.hpp), with their limit on a
  /// range's size (2^24 points).
  std::vector<int64_t> param_values(const std::string& name, const toml::node& node) {
    return toml_read::read_param_values(node, file, fmt::format("template.params.{}", name),
                                        uint64_t{1} << 24);
  }

  void read_template(const toml::node& node) {
    const toml::array* arr = node.as_array();
    if (arr == nullptr || arr->size() != 1 || !arr->get(0)->is_table()) {
      fail(line_of(node), "template",
           "a user kernel declares exactly one [[template]]: the tuned __global__ function");
    }
    const toml::table& t = *arr->get(0)->as_table();
    reject_unknown(t, {"name", "params", "derived", "constraints", "seeds"}, "the [[template]]");
    d.function = toml_read::require_string(t, "name", file, line_of(t), "the [[template]]");
    if (!is_identifier(d.function))
      fail(line_of(*t.get("name")), "template.name", "'" + d.function + "' is not an identifier");
    const toml::table* params = t.get("params") ? t.get("params")->as_table() : nullptr;
    if (params == nullptr) fail(line_of(t), "template.params", "missing: list the template parameters");
    std::set<std::string> names(d.dims.begin(), d.dims.end());
    names.insert("elem_bytes");
    for (const auto& [name, value] : toml_read::entries_in_order(*params)) {
      if (!is_identifier(name) || !names.insert(name).second)
        fail(line_of(*value), "template.params", "'" + name + "' is not a new identifier");
      d.params.push_back({name, param_values(name, *value), line_of(*value)});
    }
    if (const toml::node* seeds = t.get("seeds")) {
      const toml::array* list = seeds->as_array();
      if (list == nullptr) fail(line_of(*seeds), "template.seeds", "must be an array of { PARAM = value }");
      for (const toml::node& s : *list) d.seeds.push_back(read_config(s, "template.seeds"));
    }
    if (prebuilt) return;  // the candidates are cubins: NAME.cu need not hold the template
    // The template in NAME.cu must take the parameters, then the element type.
    const auto decl = find_kernel_template(d.cu_text, d.function);
    if (!decl) {
      fail(line_of(*t.get("name")), "template.name",
           fmt::format("{} has no `template <...> __global__ void {}(...)`", d.cu_path.filename().string(),
                       d.function));
    }
    const int expected = static_cast<int>(d.params.size()) + 1;
    if (decl->template_params != expected) {
      fail(line_of(*t.get("params")), "template.params",
           fmt::format("{}:{}: '{}' has {} template parameters; the description gives {} ({} parameters and "
                       "the element type last)",
                       d.cu_path.filename().string(), decl->line, d.function, decl->template_params, expected,
                       d.params.size()));
    }
  }

  Config read_config(const toml::node& node, const std::string& field) override {
    const toml::table* t = node.as_table();
    if (t == nullptr) fail(line_of(node), field, "must be a table { PARAM = value, ... }");
    for (auto&& [key, v] : *t) {
      const std::string_view k = key.str();
      if (std::none_of(d.params.begin(), d.params.end(), [&](const UserParam& p) { return p.name == k; }))
        fail(line_of(v), field, fmt::format("unknown parameter '{}'", k));
    }
    std::vector<Config::Param> params;
    for (const UserParam& p : d.params) {
      const toml::node* v = t->get(p.name);
      if (v == nullptr) fail(line_of(node), field, fmt::format("lacks parameter '{}'", p.name));
      params.emplace_back(p.name, toml_read::require_integer(*v, file, field + "." + p.name));
    }
    return Config(d.function, std::move(params));
  }

  void read_args(const toml::node& node) {
    const toml::array* arr = node.as_array();
    if (arr == nullptr || arr->empty())
      fail(line_of(node), "arg", "must be a non-empty array of [[arg]] tables");
    for (const toml::node& item : *arr) {
      const toml::table* t = item.as_table();
      if (t == nullptr) fail(line_of(item), "arg", "must be an array of tables ([[arg]])");
      UserArg a;
      a.line = line_of(*t);
      reject_unknown(*t, {"name", "kind", "type", "elements", "value", "scale", "fill"}, "an [[arg]]");
      a.name = toml_read::require_string(*t, "name", file, a.line, "an [[arg]]");
      if (!is_identifier(a.name)) fail(a.line, "arg.name", "'" + a.name + "' is not an identifier");
      if (d.arg_index(a.name) >= 0) fail(a.line, "arg.name", "'" + a.name + "' is declared twice");
      const std::string field = fmt::format("arg '{}'", a.name);
      const std::string kind = toml_read::require_string(*t, "kind", file, a.line, field);
      const uint32_t kind_line = line_of(*t->get("kind"));
      if (kind == "input") {
        a.kind = UserArg::Kind::kInput;
      } else if (kind == "output") {
        a.kind = UserArg::Kind::kOutput;
      } else if (kind == "workspace") {
        a.kind = UserArg::Kind::kWorkspace;
      } else if (kind == "scalar") {
        a.kind = UserArg::Kind::kScalar;
      } else {
        fail(kind_line, field + ".kind",
             fmt::format("'{}' is not one of input, output, workspace, scalar", kind));
      }
      const toml::node* type = t->get("type");
      const std::string type_text = type ? type->value<std::string>().value_or("") : "";
      if (a.kind == UserArg::Kind::kScalar) {
        for (const char* key : {"elements", "scale", "fill"}) {
          if (t->contains(key))
            fail(line_of(*t->get(key)), field + "." + key, "a scalar has no " + std::string(key));
        }
        a.scalar_type = type ? type_text : "i32";
        if (a.scalar_type != "i32" && a.scalar_type != "i64" && a.scalar_type != "f32")
          fail(type ? line_of(*type) : a.line, field + ".type", "a scalar's type is i32, i64 or f32");
        if (!t->contains("value")) fail(a.line, field + ".value", "missing: the scalar's value expression");
        a.value = expression(*t->get("value"), field + ".value");
        d.args.push_back(std::move(a));
        continue;
      }
      if (t->contains("value")) fail(line_of(*t->get("value")), field + ".value", "a buffer has no value");
      if (type != nullptr && type_text != "dtype") {
        a.integer = int_type_from_string(type_text);
        if (!a.integer) {
          try {
            a.dtype = dtype_from_string(type_text);
          } catch (const Error& e) {
            fail(line_of(*type), field + ".type",
                 std::string(e.what()) + "; or \"dtype\" (the problem's), or i32, i64, u8 for integers");
          }
        }
      }
      if (!t->contains("elements"))
        fail(a.line, field + ".elements", "missing: the element count, an expression of the dimensions");
      a.elements = expression(*t->get("elements"), field + ".elements");
      if (const toml::node* s = t->get("scale")) {
        if (a.kind != UserArg::Kind::kInput) fail(line_of(*s), field + ".scale", "only an input is filled");
        const auto v = s->value<double>();
        if (!v || !(*v > 0)) fail(line_of(*s), field + ".scale", "must be a positive number");
        a.fill.scale = *v;
      }
      if (const toml::node* f = t->get("fill")) {
        if (a.kind != UserArg::Kind::kInput) fail(line_of(*f), field + ".fill", "only an input is filled");
        if (t->contains("scale"))
          fail(line_of(*f), field + ".fill",
               "scale belongs to the default random fill; give a range instead");
        a.fill = read_user_fill(*this, *f, a, field + ".fill");
      } else if (a.integer && a.kind == UserArg::Kind::kInput && !inputs_from_files) {
        fail(a.line, field + ".fill",
             fmt::format(
                 "missing: an {} input needs a fill (a range, a pattern or a sequence): random integers "
                 "would index anywhere",
                 to_string(*a.integer)));
      }
      d.args.push_back(std::move(a));
    }
    if (std::none_of(d.args.begin(), d.args.end(),
                     [](const UserArg& a) { return a.kind == UserArg::Kind::kOutput; }))
      fail(line_of(node), "arg", "no argument is an output: nothing to verify");
  }

  UserLaunch read_launch(const toml::table& t, const std::string& field, bool reference) override {
    UserLaunch l;
    l.line = line_of(t);
    if (const toml::node* f = t.get("function")) {
      l.function = f->value<std::string>().value_or("");
      if (!is_identifier(l.function)) fail(line_of(*f), field + ".function", "must be an identifier");
    } else if (reference) {
      fail(l.line, field + ".function", "missing: the reference kernel's name");
    } else {
      l.function = d.function;
    }
    if (!t.contains("grid")) fail(l.line, field + ".grid", "missing: 1 to 3 expressions");
    l.grid = expressions(*t.get("grid"), field + ".grid");
    if (prebuilt && !reference) {
      // A cubin says its own block and shared memory; it is the only function there is.
      for (const char* key : {"block", "shared", "function"}) {
        if (t.contains(key))
          fail(line_of(*t.get(key)), field + "." + key,
               "a prebuilt cubin's launch takes its function, block and shared memory from the cubin");
      }
    } else {
      if (!t.contains("block")) fail(l.line, field + ".block", "missing: 1 to 3 expressions");
      l.block = expressions(*t.get("block"), field + ".block");
    }
    if (const toml::node* s = t.get("shared")) l.shared = expression(*s, field + ".shared");
    if (const toml::node* a = t.get("args")) {
      if (reference) fail(line_of(*a), field + ".args", "the reference takes every argument");
      l.args = toml_read::require_string_array(t, "args", file, l.line, field);
      for (const auto& name : l.args) {
        if (d.arg_index(name) < 0)
          fail(line_of(*a), field + ".args", fmt::format("no [[arg]] named '{}'", name));
      }
    }
    if (l.function != d.function || reference) {
      if (d.cu_text.empty())
        fail(l.line, field + ".function",
             fmt::format("'{}' would be in {}, which does not exist", l.function,
                         d.cu_path.filename().string()));
      const auto decl = find_kernel_template(d.cu_text, l.function);
      const int expected = reference ? 1 : static_cast<int>(d.params.size()) + 1;
      if (!decl) {
        fail(l.line, field + ".function",
             fmt::format("{} has no `template <...> __global__ void {}(...)`", d.cu_path.filename().string(),
                         l.function));
      }
      if (decl->template_params != expected) {
        fail(l.line, field + ".function",
             fmt::format("{}:{}: '{}' has {} template parameters; {} expected ({})",
                         d.cu_path.filename().string(), decl->line, l.function, decl->template_params,
                         expected, reference ? "the element type" : "the parameters, then the element type"));
      }
    }
    return l;
  }

  void read_launches(const toml::node& node) {
    const toml::array* arr = node.as_array();
    if (arr == nullptr || arr->empty())
      fail(line_of(node), "launch", "must be a non-empty array of [[launch]]");
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const toml::table* t = arr->get(i)->as_table();
      if (t == nullptr) fail(line_of(*arr->get(i)), "launch", "must be an array of tables ([[launch]])");
      reject_unknown(*t, {"function", "grid", "block", "shared", "args"}, "a [[launch]]");
      d.launches.push_back(read_launch(*t, fmt::format("launch {}", i + 1), false));
    }
    if (prebuilt && d.launches.size() != 1)
      fail(line_of(node), "launch", "a prebuilt cubin is one launch: give exactly one [[launch]]");
  }

  void read_work(const toml::node& node) {
    const toml::table* t = node.as_table();
    if (t == nullptr) fail(line_of(node), "work", "must be a table { bytes = \"...\", flops = \"...\" }");
    reject_unknown(*t, {"bytes", "flops"}, "[work]");
    if (const toml::node* b = t->get("bytes")) d.work.bytes = expression(*b, "work.bytes");
    if (const toml::node* f = t->get("flops")) d.work.flops = expression(*f, "work.flops");
  }

  void read(const toml::table& root) {
    toml_read::reject_unknown_keys(root,
                                   {"kernel", "description", "dims", "dtypes", "template", "arg", "launch",
                                    "reference", "verify", "work", "prebuilt"},
                                   file, "a user kernel description");
    if (const toml::node* k = root.get("kernel")) {
      if (k->value<std::string>().value_or("") != d.name)
        fail(line_of(*k), "kernel", fmt::format("must be '{}', the file's name (or be left out)", d.name));
    }
    if (const toml::node* desc = root.get("description"))
      d.description = desc->value<std::string>().value_or("");
    d.dims = toml_read::require_string_array(root, "dims", file, 1, "the description");
    const uint32_t dims_line = line_of(*root.get("dims"));
    std::set<std::string> seen;
    for (const auto& dim : d.dims) {
      if (!is_identifier(dim) || dim == "elem_bytes" || !seen.insert(dim).second)
        fail(dims_line, "dims", fmt::format("'{}' is not a new identifier", dim));
    }
    for (const auto& t : toml_read::require_string_array(root, "dtypes", file, 1, "the description")) {
      try {
        d.dtypes.push_back(dtype_from_string(t));
      } catch (const Error& e) {
        fail(line_of(*root.get("dtypes")), "dtypes", e.what());
      }
    }
    prebuilt = root.contains("prebuilt");
    if (!prebuilt && d.cu_text.empty())
      fail(1, "prebuilt",
           fmt::format("{} does not exist (or is empty), and there is no [prebuilt] table of cubins",
                       d.cu_path.filename().string()));
    if (!root.contains("template")) fail(1, "template", "missing: the [[template]] with its parameters");
    read_template(*root.get("template"));
    std::vector<std::string> slots = d.dims;
    for (const auto& p : d.params) slots.push_back(p.name);
    slots.emplace_back("elem_bytes");
    symbols.emplace(std::move(slots));
    if (!root.contains("arg")) fail(1, "arg", "missing: the kernel's arguments in order ([[arg]])");
    // A data reference's inputs are its files: an integer input needs no fill then.
    const toml::node* reference = root.get("reference");
    inputs_from_files =
        reference != nullptr && reference->is_table() && reference->as_table()->contains("data");
    read_args(*root.get("arg"));
    if (prebuilt) {
      d.prebuilt = read_prebuilt(*this, d, *root.get("prebuilt"), cubin_folder(folder, d.name));
      if (d.prebuilt->cubins.empty()) read_cubin_index();
    }
    if (!root.contains("launch")) fail(1, "launch", "missing: at least one [[launch]] with grid and block");
    read_launches(*root.get("launch"));
    d.reference = read_reference(*this, d, root, folder);
    if (const toml::node* w = root.get("work")) read_work(*w);
    for (std::size_t i = 0; i < d.seeds.size(); ++i) check_point(d.seeds[i], "template.seeds", 0);
    if (d.reference.kind == UserReference::Kind::kConfig)
      check_point(d.reference.config, "reference.config", 0);
    if (d.prebuilt) {
      for (const UserCubin& c : d.prebuilt->cubins) check_point(c.config, "prebuilt.cubin", 0);
      if (d.reference.kind == UserReference::Kind::kConfig &&
          std::none_of(d.prebuilt->cubins.begin(), d.prebuilt->cubins.end(),
                       [&](const UserCubin& c) { return c.config == d.reference.config; }))
        fail(d.reference.line, "reference.config", "no [[prebuilt.cubin]] has this config");
    }
  }

  /// The cubins of a `[prebuilt]` table that lists none: NAME.cubins/index.toml's `[[cubin]]`s, and
  /// its `[[prune]]`s, its mistakes named by that file's lines.
  void read_cubin_index() {
    const auto cubins = cubin_folder(folder, d.name);
    const auto index = cubin_index(cubins);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(index, ec))
      fail(d.prebuilt->line, "prebuilt.cubin",
           fmt::format("missing: one [[prebuilt.cubin]] per config and dtype here, or {} listing them",
                       index.string()));
    if (d.prebuilt->producer.empty())
      fail(d.prebuilt->line, "prebuilt.producer",
           "missing: cubins listed in an index are not part of the kernel's hash, so what made them must be");
    const toml::table root = toml_read::parse_toml_file(index);
    const std::string description_file = std::exchange(file, index.string());
    reject_unknown(root, {"cubin", "prune"}, "a cubin index");
    if (!root.contains("cubin"))
      fail(1, "cubin", "missing: one [[cubin]] per config, dtype and specialization");
    read_cubins(*this, d, *root.get("cubin"), "cubin", cubins, *d.prebuilt);
    if (const toml::node* prunes = root.get("prune")) read_prunes(*this, d, *prunes, "prune", *d.prebuilt);
    file = description_file;
  }

  /// A config's values must be among its parameters' values.
  void check_point(const Config& c, const std::string& field, uint32_t line) override {
    for (const UserParam& p : d.params) {
      const int64_t v = c.at(p.name);
      if (std::find(p.values.begin(), p.values.end(), v) == p.values.end())
        fail(line != 0 ? line : p.line, field,
             fmt::format("{} = {} is not one of the parameter's values", p.name, v));
    }
  }
};

}  // namespace

const UserCubin* UserPrebuilt::find(const Config& config, DType dtype,
                                    const std::function<int64_t(const std::string&)>& value_of) const {
  for (const UserCubin& c : cubins) {
    if (c.dtype != dtype || c.config != config) continue;
    if (!value_of) return &c;
    const bool ones =
        std::all_of(c.ones.begin(), c.ones.end(), [&](const auto& a) { return value_of(a) == 1; });
    const bool aligned =
        std::all_of(c.aligned.begin(), c.aligned.end(), [&](const auto& a) { return value_of(a) % 16 == 0; });
    if (ones && aligned) return &c;
  }
  return nullptr;
}

std::filesystem::path cubin_folder(const std::filesystem::path& folder, const std::string& name) {
  return folder / (name + ".cubins");
}

int UserKernelDescription::arg_index(std::string_view arg_name) const {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

UserKernelDescription parse_user_kernel(const std::string& name, const std::string& toml_text,
                                        const std::filesystem::path& toml_path, const std::string& cu_text,
                                        const std::filesystem::path& cu_path) {
  Reader r;
  r.file = toml_path.string();
  r.d.name = name;
  r.d.toml_path = toml_path;
  r.d.cu_path = cu_path;
  r.d.toml_text = toml_text;
  r.d.cu_text = cu_text;
  r.folder = toml_path.parent_path();
  if (!is_identifier(name))
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: the kernel name '{}' is not an identifier", r.file, name));
  r.read(toml_read::parse_toml(toml_text, r.file));
  return std::move(r.d);
}

UserPrebuilt reread_cubin_index(const UserKernelDescription& d) {
  if (!d.prebuilt) throw Error(ErrorKind::kBadInput, d.name + " has no prebuilt cubins");
  Reader r;
  r.file = d.toml_path.string();
  r.d = d;
  r.folder = d.toml_path.parent_path();
  r.d.prebuilt->cubins.clear();
  r.d.prebuilt->prunes.clear();
  r.read_cubin_index();
  return std::move(*r.d.prebuilt);
}

UserKernelDescription read_user_kernel(const std::filesystem::path& folder, const std::string& name) {
  const auto toml_path = folder / (name + ".toml");
  const auto cu_path = folder / (name + ".cu");
  std::error_code ec;
  // A prebuilt description may have no NAME.cu; the reader says so when it needs one.
  const std::string cu_text = std::filesystem::exists(cu_path, ec) ? read_file(cu_path) : std::string();
  return parse_user_kernel(name, read_file(toml_path), toml_path, cu_text, cu_path);
}

}  // namespace ktune::kernel_templates
