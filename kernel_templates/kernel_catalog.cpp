#include "kernel_templates/kernel_catalog.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

/// One family's entry, from its registered templates: their dimensions (which must agree), the union
/// of their dtypes and of their layouts (the family's default first).
KernelDescriptor describe(const FamilyInfo& family) {
  const std::vector<const KernelSpec*> specs = specs_of(family.name);
  if (specs.empty())
    throw std::logic_error("kernel family '" + std::string(family.name) + "' has no templates");
  KernelDescriptor d{std::string(family.name),
                     specs.front()->dims(),
                     {},
                     std::string(family.summary),
                     std::string(family.default_layout),
                     {std::string(family.default_layout)}};
  for (const KernelSpec* spec : specs) {
    if (spec->dims() != d.dims) {
      throw std::logic_error("the templates of kernel '" + d.name + "' disagree on its dimensions ('" +
                             std::string(spec->variant()) + "')");
    }
    for (DType t : spec->dtypes()) {
      if (!d.supports(t)) d.dtypes.push_back(t);
    }
    for (const auto& l : spec->layouts()) {
      if (!d.supports_layout(l)) d.layouts.push_back(l);
    }
  }
  return d;
}

const std::vector<KernelDescriptor>& builtin_table() {
  static const std::vector<KernelDescriptor> kTable = [] {
    std::vector<KernelDescriptor> out;
    for (const FamilyInfo& family : template_families()) out.push_back(describe(family));
    // The bandwidth ceiling the reports measure kernels against: a measurement, not a template.
    out.push_back({"copy",
                   {"n"},
                   {DType::kF32, DType::kF16, DType::kBF16},
                   "device-to-device copy (bandwidth ceiling)",
                   "",
                   {""}});
    return out;
  }();
  return kTable;
}

/// The built-in kernels, then the user kernels; rebuilt when a user kernel is loaded (at start-up,
/// before the catalog is read from several threads: a rebuild invalidates what an earlier call
/// returned).
const std::vector<KernelDescriptor>& table() {
  static std::mutex mu;
  static std::vector<KernelDescriptor> table;
  static uint64_t generation = ~uint64_t{0};
  std::lock_guard lock(mu);
  if (generation != user_kernel_generation()) {
    generation = user_kernel_generation();
    table = builtin_table();
    for (const UserKernelSpec* user : user_kernels()) {
      KernelDescriptor d{std::string(user->kernel()),     user->dims(), {},
                         user->description().description, "",           {""}};
      if (d.summary.empty()) d.summary = "user kernel from " + user->description().toml_path.string();
      d.dtypes = user->dtypes();
      table.push_back(std::move(d));
    }
  }
  return table;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += ", ";
    out += p;
  }
  return out;
}

}  // namespace

bool KernelDescriptor::supports(DType dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

DType KernelDescriptor::parse_dtype(std::string_view text) const {
  const std::optional<DType> dtype = find_dtype(text);
  if (!dtype || !supports(*dtype)) {
    throw Error(ErrorKind::kBadInput, "kernel '" + name + "' does not support dtype '" + std::string(text) +
                                          "' (supported: " + dtype_names(dtypes) + ")");
  }
  return *dtype;
}

void KernelDescriptor::require_dtype(DType dtype) const { parse_dtype(to_string(dtype)); }

bool KernelDescriptor::supports_layout(std::string_view layout) const {
  return std::find(layouts.begin(), layouts.end(), layout) != layouts.end();
}

void KernelDescriptor::require_layout(std::string_view layout) const {
  if (!supports_layout(layout)) {
    std::vector<std::string> shown;
    for (const auto& l : layouts) shown.push_back(l.empty() ? "\"\"" : l);
    throw Error(ErrorKind::kBadInput, "kernel '" + name + "' does not accept layout '" + std::string(layout) +
                                          "' (accepted: " + join(shown) + ")");
  }
}

std::string KernelDescriptor::example_shape() const {
  // Typical LLM-decode sizes, only to show the form of the text.
  static const std::map<std::string, std::string, std::less<>> kExamples = {
      {"m", "16"},      {"n", "4096"},     {"k", "4096"},     {"rows", "16"},      {"hidden", "4096"},
      {"tokens", "16"}, {"heads_q", "32"}, {"heads_kv", "8"}, {"head_dim", "128"}, {"cols", "32000"},
      {"i", "14336"},   {"batch", "8"},    {"seq", "4096"},   {"rot_dim", "64"},
  };
  std::string out;
  for (const auto& d : dims) {
    if (!out.empty()) out += ",";
    auto it = kExamples.find(d);
    out += d + "=" + (it == kExamples.end() ? std::string("1024") : it->second);
  }
  return out;
}

std::span<const KernelDescriptor> kernel_catalog() { return table(); }

const KernelDescriptor* find_kernel(std::string_view name) {
  for (const auto& k : table()) {
    if (k.name == name) return &k;
  }
  throw Error(ErrorKind::kBadInput, "unknown kernel '" + std::string(name) +
                                        "' (known kernels: " + known_kernel_names() +
                                        "; a kernel of your own: --kernel-dir DIR, docs/byo.md)");
}

const KernelDescriptor* lookup_kernel(std::string_view name, std::string_view shape, std::string_view dtype,
                                      const std::function<bool(std::string_view)>& stored,
                                      KernelDescriptor& scratch) {
  for (const auto& k : table()) {
    if (k.name == name) return &k;
  }
  if (!stored(name)) return find_kernel(name);  // throws, listing the known kernels
  scratch = KernelDescriptor{std::string(name), {}, {dtype_from_string(std::string(dtype))}, "stored in the database", "", {""}};
  const Shape parsed = Shape::parse(shape);
  for (const auto& [dim, value] : parsed.dims()) scratch.dims.push_back(dim);
  return &scratch;
}

bool is_known_kernel(std::string_view name) {
  return std::any_of(table().begin(), table().end(),
                     [&](const KernelDescriptor& k) { return k.name == name; });
}

std::string known_kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : table()) names.push_back(k.name);
  return join(names);
}

}  // namespace ktune::kernel_templates
