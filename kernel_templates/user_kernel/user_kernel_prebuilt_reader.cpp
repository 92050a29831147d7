// Reading a user kernel description's `[prebuilt]` table: cubins compiled ahead of time (a Triton
// kernel's configs) that stand for the candidates NVRTC would otherwise compile from NAME.cu.
#include "kernel_templates/user_kernel/user_kernel_prebuilt_reader.hpp"

#include <algorithm>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "core/toml_read.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using toml_read::line_of;

/// Most threads a block may have, and most dynamic shared memory a block may ask for on any GPU so
/// far (227 KiB on sm_90 and sm_100); the device's own limit is checked at launch.
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxSharedBytes = 232448;
/// Two scratch pointers are what Triton 3.6 appends; a few more leave room for a later version.
constexpr std::size_t kMaxScratch = 4;

int64_t integer_in(DescriptionReaderContext& ctx, const toml::table& t, std::string_view key, int64_t lo,
                   int64_t hi, const std::string& field, std::optional<int64_t> fallback = std::nullopt) {
  const toml::node* n = t.get(key);
  if (n == nullptr) {
    if (fallback) return *fallback;
    ctx.fail(line_of(t), field + "." + std::string(key), "missing");
  }
  const auto v = n->value<int64_t>();
  if (!n->is_integer() || !v || *v < lo || *v > hi)
    ctx.fail(line_of(*n), field + "." + std::string(key),
             fmt::format("must be an integer in [{}, {}]", lo, hi));
  return *v;
}

std::string string_in(DescriptionReaderContext& ctx, const toml::table& t, std::string_view key,
                      const std::string& field) {
  const toml::node* n = t.get(key);
  if (n == nullptr) ctx.fail(line_of(t), field + "." + std::string(key), "missing");
  if (!n->is_string()) ctx.fail(line_of(*n), field + "." + std::string(key), "must be a string");
  return n->value<std::string>().value();
}

/// `key` of a cubin: a list of the description's integer scalar args (none when absent).
std::vector<std::string> integer_args_in(DescriptionReaderContext& ctx, const UserKernelDescription& d,
                                         const toml::table& t, std::string_view key,
                                         const std::string& field) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  const std::string where = field + "." + std::string(key);
  const toml::array* list = n->as_array();
  if (list == nullptr) ctx.fail(line_of(*n), where, "must be a list of integer scalar args");
  for (const toml::node& e : *list) {
    const auto name = e.value<std::string>();
    const int i = name ? d.arg_index(*name) : -1;
    if (i < 0 || d.args[static_cast<std::size_t>(i)].kind != UserArg::Kind::kScalar ||
        d.args[static_cast<std::size_t>(i)].scalar_type == "f32")
      ctx.fail(line_of(e), where, fmt::format("'{}' is not an integer scalar arg", name.value_or("?")));
    if (std::find(out.begin(), out.end(), *name) != out.end())
      ctx.fail(line_of(e), where, fmt::format("'{}' is listed twice", *name));
    out.push_back(*name);
  }
  return out;
}

UserCubin read_cubin(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::table& t,
                     const std::string& field, const std::filesystem::path& cubins) {
  ctx.reject_unknown(t,
                     {"config", "dtype", "file", "entry", "threads", "shared", "scratch", "ones", "aligned",
                      "name", "pending", "failed"},
                     field);
  UserCubin c;
  c.line = line_of(t);
  if (!t.contains("config")) ctx.fail(c.line, field + ".config", "missing: the config it was compiled for");
  c.config = ctx.read_config(*t.get("config"), field + ".config");
  c.dtype = dtype_in(ctx, d, t, field);
  if (const toml::node* p = t.get("pending")) {
    if (!p->is_boolean()) ctx.fail(line_of(*p), field + ".pending", "must be true or false");
    c.pending = p->value<bool>().value();
  }
  if (t.contains("failed")) {
    c.failed = string_in(ctx, t, "failed", field);
    if (c.failed.empty())
      ctx.fail(line_of(*t.get("failed")), field + ".failed", "must say why the compile failed");
    if (c.pending)
      ctx.fail(line_of(*t.get("failed")), field + ".failed", "a cubin is pending or failed, not both");
  }
  // A pending or failed cubin has no file, entry, shared memory or scratch yet.
  const bool whole = !c.pending && c.failed.empty();
  const std::string name = string_in(ctx, t, "file", field);
  if (name.empty() || name.find('/') != std::string::npos || name.front() == '.')
    ctx.fail(line_of(*t.get("file")), field + ".file",
             "must be a file name in " + cubins.filename().string());
  c.file = cubins / name;
  std::error_code ec;
  if (whole && !std::filesystem::is_regular_file(c.file, ec))
    ctx.fail(line_of(*t.get("file")), field + ".file", fmt::format("'{}' does not exist", c.file.string()));
  if (whole || t.contains("entry")) {
    c.entry = string_in(ctx, t, "entry", field);
    static const std::regex kSymbol("[A-Za-z_][A-Za-z0-9_$]*");
    if (!std::regex_match(c.entry, kSymbol))
      ctx.fail(line_of(*t.get("entry")), field + ".entry", "'" + c.entry + "' is not a kernel's symbol");
  }
  c.threads = static_cast<uint32_t>(integer_in(ctx, t, "threads", 1, kMaxThreads, field));
  c.shared_bytes = static_cast<uint32_t>(integer_in(ctx, t, "shared", 0, kMaxSharedBytes, field, 0));
  if (const toml::node* s = t.get("scratch")) {
    const toml::array* list = s->as_array();
    if (list == nullptr || list->size() > kMaxScratch)
      ctx.fail(line_of(*s), field + ".scratch",
               fmt::format("must list at most {} per-program byte counts", kMaxScratch));
    for (const toml::node& n : *list) {
      const auto v = n.value<int64_t>();
      if (!n.is_integer() || !v || *v < 0) ctx.fail(line_of(n), field + ".scratch", "a byte count is >= 0");
      c.scratch.push_back(static_cast<uint64_t>(*v));
    }
  }
  c.ones = integer_args_in(ctx, d, t, "ones", field);
  c.aligned = integer_args_in(ctx, d, t, "aligned", field);
  c.name = t.contains("name") ? string_in(ctx, t, "name", field) : "";
  return c;
}

}  // namespace

DType dtype_in(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::table& t,
               const std::string& field) {
  const std::string text = string_in(ctx, t, "dtype", field);
  DType dtype = DType::kF32;
  try {
    dtype = dtype_from_string(text);
  } catch (const Error& e) {
    ctx.fail(line_of(*t.get("dtype")), field + ".dtype", e.what());
  }
  if (std::find(d.dtypes.begin(), d.dtypes.end(), dtype) == d.dtypes.end())
    ctx.fail(line_of(*t.get("dtype")), field + ".dtype", fmt::format("{} is not in dtypes", text));
  return dtype;
}

UserPrebuilt read_prebuilt(DescriptionReaderContext& ctx, const UserKernelDescription& d,
                           const toml::node& node, const std::filesystem::path& cubins) {
  const toml::table* t = node.as_table();
  if (t == nullptr) ctx.fail(line_of(node), "prebuilt", "must be a table with arch and [[prebuilt.cubin]]");
  ctx.reject_unknown(*t, {"arch", "producer", "cubin"}, "[prebuilt]");
  UserPrebuilt p;
  p.line = line_of(*t);
  p.arch = string_in(ctx, *t, "arch", "prebuilt");
  static const std::regex kArch("sm_[0-9]+[af]?");
  if (!std::regex_match(p.arch, kArch))
    ctx.fail(line_of(*t->get("arch")), "prebuilt.arch", "'" + p.arch + "' is not an sm_XY architecture");
  if (const toml::node* producer = t->get("producer"))
    p.producer = producer->value<std::string>().value_or("");
  if (const toml::node* list = t->get("cubin")) read_cubins(ctx, d, *list, "prebuilt.cubin", cubins, p);
  return p;
}

void read_cubins(DescriptionReaderContext& ctx, const UserKernelDescription& d, const toml::node& node,
                 const std::string& field, const std::filesystem::path& cubins, UserPrebuilt& p) {
  const toml::array* list = node.as_array();
  if (list == nullptr || list->empty())
    ctx.fail(line_of(node), field, "must list one table per config, dtype and specialization");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const toml::table* c = list->get(i)->as_table();
    const std::string where = fmt::format("{} {}", field, i + 1);
    if (c == nullptr) ctx.fail(line_of(*list->get(i)), where, "must be a table ([[" + field + "]])");
    UserCubin cubin = read_cubin(ctx, d, *c, where, cubins);
    for (const UserCubin& other : p.cubins) {
      if (other.config == cubin.config && other.dtype == cubin.dtype && other.ones == cubin.ones &&
          other.aligned == cubin.aligned)
        ctx.fail(cubin.line, where, "a second cubin of the same config, dtype, ones and aligned");
    }
    p.cubins.push_back(std::move(cubin));
  }
}

std::filesystem::path cubin_index(const std::filesystem::path& cubins) { return cubins / "index.toml"; }

}  // namespace ktune::kernel_templates
