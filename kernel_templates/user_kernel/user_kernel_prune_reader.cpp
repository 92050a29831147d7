// Reading a cubin index's `[[prune]]` tables: the configs one (dtype, shape) keeps, which
// UserKernelSpec::tuning_rejection leaves as that key's only candidates.
#include "kernel_templates/user_kernel/user_kernel_prune_reader.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/toml_read.hpp"
#include "kernel_templates/user_kernel/user_kernel_prebuilt_reader.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using toml_read::line_of;

std::string shape_text(const UserPrune& p) {
  std::string out;
  for (const auto& [dim, value] : p.shape) out += fmt::format("{}{}={}", out.empty() ? "" : ",", dim, value);
  return out;
}

/// `shape = { DIM = value, ... }`: every dim of the description, nothing else, in its dims' order.
std::vector<std::pair<std::string, int64_t>> shape_in(DescriptionReaderContext& ctx,
                                                      const UserKernelDescription& d, const toml::table& t,
                                                      const std::string& field) {
  const std::string where = field + ".shape";
  const toml::node* n = t.get("shape");
  if (n == nullptr) ctx.fail(line_of(t), where, "missing: { DIM = value, ... } for every dim");
  const toml::table* shape = n->as_table();
  if (shape == nullptr) ctx.fail(line_of(*n), where, "must be a table { DIM = value, ... } for every dim");
  for (const auto& [dim, value] : toml_read::entries_in_order(*shape)) {
    if (std::find(d.dims.begin(), d.dims.end(), dim) == d.dims.end())
      ctx.fail(line_of(*value), where,
               fmt::format("'{}' is not a dim of the description (dims: {})", dim, fmt::join(d.dims, ", ")));
  }
  std::vector<std::pair<std::string, int64_t>> out;
  for (const std::string& dim : d.dims) {
    const toml::node* v = shape->get(dim);
    if (v == nullptr) ctx.fail(line_of(*n), where, fmt::format("lacks dim '{}'", dim));
    const auto value = v->value<int64_t>();
    if (!v->is_integer() || !value || *value < 1)
      ctx.fail(line_of(*v), where + "." + dim, "must be an integer >= 1");
    out.emplace_back(dim, *value);
  }
  return out;
}

std::vector<Config> keep_in(DescriptionReaderContext& ctx, const toml::table& t, const std::string& field) {
  const std::string where = field + ".keep";
  const toml::node* n = t.get("keep");
  // prune_configs_by must keep at least one config; a key that keeps every config has no entry.
  if (n == nullptr) ctx.fail(line_of(t), where, "missing: the configs this dtype and shape keep");
  const toml::array* list = n->as_array();
  if (list == nullptr)
    ctx.fail(line_of(*n), where, "must be a list of configs [{ PARAM = value, ... }, ...]");
  if (list->empty()) ctx.fail(line_of(*n), where, "keeps no config: prune_configs_by must keep at least one");
  std::vector<Config> out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const toml::node& item = *list->get(i);
    const std::string at = fmt::format("{}[{}]", where, i);
    Config c = ctx.read_config(item, at);
    ctx.check_point(c, at, line_of(item));
    if (std::find(out.begin(), out.end(), c) != out.end()) ctx.fail(line_of(item), at, "a config kept twice");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

void read_prunes(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::node& node,
                 const std::string& field, UserPrebuilt& p) {
  const toml::array* list = node.as_array();
  if (list == nullptr) ctx.fail(line_of(node), field, "must be an array of tables ([[" + field + "]])");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const toml::table* t = list->get(i)->as_table();
    const std::string where = fmt::format("{} {}", field, i + 1);
    if (t == nullptr) ctx.fail(line_of(*list->get(i)), where, "must be a table ([[" + field + "]])");
    ctx.reject_unknown(*t, {"dtype", "shape", "keep"}, where);
    UserPrune prune;
    prune.line = line_of(*t);
    prune.dtype = dtype_in(ctx, d, *t, where);
    prune.shape = shape_in(ctx, d, *t, where);
    prune.keep = keep_in(ctx, *t, where);
    for (const UserPrune& other : p.prunes) {
      if (other.dtype == prune.dtype && other.shape == prune.shape)
        ctx.fail(prune.line, where,
                 fmt::format("a second [[{}]] of {} {} (the first is at line {})", field, shape_text(prune),
                             to_string(prune.dtype), other.line));
    }
    p.prunes.push_back(std::move(prune));
  }
}

}  // namespace ktune::kernel_templates
