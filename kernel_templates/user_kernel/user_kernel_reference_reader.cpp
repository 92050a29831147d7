// Reading a user kernel description's `[reference]`: a kernel, a config, saved outputs, or none.
#include "kernel_templates/user_kernel/user_kernel_reference_reader.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/toml_read.hpp"

namespace ktune::kernel_templates {
namespace {

using toml_read::line_of;

/// `[reference] data = "FOLDER"` (and `producer`): inputs and expected outputs saved per key
/// (docs/byo.md, "A reference's saved outputs"). Every input is read from its file, so none may
/// have a fill of its own.
void read_data_reference(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::table& t,
                         const toml::node& data, const std::filesystem::path& folder, UserReference& r) {
  for (const char* other : {"function", "grid", "block", "shared", "config"}) {
    if (t.contains(other))
      ctx.fail(line_of(*t.get(other)), "reference",
               fmt::format("give either 'data' or '{}', not both", other));
  }
  const auto text = data.value<std::string>();
  const std::filesystem::path rel(text.value_or(""));
  const bool plain = !rel.empty() && rel.is_relative() &&
                     std::none_of(rel.begin(), rel.end(), [](const auto& part) { return part == ".."; });
  if (!text || !plain)
    ctx.fail(line_of(data), "reference.data",
             "must be a folder beside the description (a relative path, no '..')");
  r.kind = UserReference::Kind::kData;
  r.data = std::filesystem::absolute(folder / rel);  // the worker reads it from any folder
  if (const toml::node* p = t.get("producer")) {
    const auto producer = p->value<std::string>();
    if (!producer) ctx.fail(line_of(*p), "reference.producer", "must be a string");
    r.producer = *producer;
  }
  for (const UserArg& a : d.args) {
    if (a.kind == UserArg::Kind::kInput && a.fill.line != 0)
      ctx.fail(
          a.fill.line, "arg " + a.name + ".fill",
          "the inputs of a data reference are read from its files (DTYPE/SHAPE/NAME.bin): leave fill out");
  }
}

double relative_bound(DescriptionReaderContext& ctx, const toml::node& node, const std::string& field) {
  const auto v = node.value<double>();
  if (!v || !(*v > 0) || *v > 1) ctx.fail(line_of(node), field, "must be a relative error in (0, 1]");
  return *v;
}

/// `tolerance = { OUTPUT = rel, OUTPUT = { rel = R, abs = A }, ... }`: each an output argument;
/// a relative bound in (0, 1], an absolute bound >= 0; an integer output takes abs only.
void read_tolerance(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::node& node,
                    UserReference& r) {
  const toml::table* t = node.as_table();
  if (t == nullptr)
    ctx.fail(line_of(node), "reference.tolerance",
             "must be a table { OUTPUT = relative error } or { OUTPUT = { rel = R, abs = A } }");
  for (const auto& [name, value] : toml_read::entries_in_order(*t)) {
    const int i = d.arg_index(name);
    if (i < 0 || d.args[static_cast<std::size_t>(i)].kind != UserArg::Kind::kOutput)
      ctx.fail(line_of(*value), "reference.tolerance", fmt::format("'{}' is not an output argument", name));
    const UserArg& out = d.args[static_cast<std::size_t>(i)];
    const std::string field = "reference.tolerance." + name;
    UserTolerance bounds;
    if (const toml::table* both = value->as_table()) {
      ctx.reject_unknown(*both, {"rel", "abs"}, field);
      if (both->empty()) ctx.fail(line_of(*value), field, "give rel, abs or both");
      if (const toml::node* rel = both->get("rel")) bounds.rel = relative_bound(ctx, *rel, field + ".rel");
      if (const toml::node* a = both->get("abs")) {
        const auto v = a->value<double>();
        if (!v || !(*v >= 0) || !std::isfinite(*v))
          ctx.fail(line_of(*a), field + ".abs", "must be a bound on max |out - ref|, a number >= 0");
        bounds.abs = *v;
      }
    } else {
      bounds.rel = relative_bound(ctx, *value, field);
    }
    if (out.integer && bounds.rel) {
      ctx.fail(line_of(*value), field,
               fmt::format("'{}' is an {} output: it is compared exactly, or within {{ abs = N }}", name,
                           to_string(*out.integer)));
    }
    r.tolerance[name] = bounds;
  }
}

}  // namespace

UserReference read_reference(DescriptionReaderContext& ctx, const UserKernelDescription& d,
                             const toml::table& root, const std::filesystem::path& folder) {
  UserReference r;
  const toml::node* verify = root.get("verify");
  const toml::node* ref = root.get("reference");
  if (verify != nullptr) {
    if (!verify->is_boolean() || verify->value<bool>().value())
      ctx.fail(line_of(*verify), "verify",
               "may only be false (a kernel without a reference); otherwise leave it out");
    if (ref != nullptr) ctx.fail(line_of(*ref), "reference", "verify = false and a [reference] contradict");
    r.kind = UserReference::Kind::kNone;
    r.line = line_of(*verify);
    return r;
  }
  if (ref == nullptr || !ref->is_table()) {
    ctx.fail(
        1, "reference",
        "missing: a [reference] (a kernel or a config of this template), or verify = false to store every "
        "result as unverified");
  }
  const toml::table& t = *ref->as_table();
  r.line = line_of(t);
  ctx.reject_unknown(t, {"function", "grid", "block", "shared", "config", "tolerance", "data", "producer"},
                     "[reference]");
  if (const toml::node* tol = t.get("tolerance")) read_tolerance(ctx, d, *tol, r);
  if (const toml::node* data = t.get("data")) {
    read_data_reference(ctx, d, t, *data, folder, r);
    return r;
  }
  if (const toml::node* p = t.get("producer"))
    ctx.fail(line_of(*p), "reference.producer",
             "names what computed a data reference's outputs: give data too");
  if (const toml::node* c = t.get("config")) {
    if (t.contains("function"))
      ctx.fail(line_of(*c), "reference", "give either 'function' or 'config', not both");
    r.kind = UserReference::Kind::kConfig;
    r.config = ctx.read_config(*c, "reference.config");
    return r;
  }
  r.kind = UserReference::Kind::kKernel;
  r.launch = ctx.read_launch(t, "reference", true);
  return r;
}

}  // namespace ktune::kernel_templates
