#include "reports/resource_table.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "reports/flat_json.hpp"

namespace ktune::reports {
namespace {

int64_t ceil_to(int64_t v, int64_t unit) { return (v + unit - 1) / unit * unit; }

/// The stored resources as sorted (name, text) pairs (the SAX path: reports read many rows).
class Fields {
 public:
  explicit Fields(std::string_view json) { ok_ = flatten_json_object(json, values_); }
  bool ok() const { return ok_; }
  const std::string* text(const std::string& name) const {
    const auto it = std::lower_bound(values_.begin(), values_.end(), name,
                                     [](const NamedValue& v, const std::string& n) { return v.first < n; });
    return it != values_.end() && it->first == name ? &it->second : nullptr;
  }
  bool has(const std::string& name) const { return text(name) != nullptr; }
  /// resources[worker_<name>] when the worker recorded it, else resources[name]; 0 when neither.
  int64_t integer(const std::string& name) const {
    for (const std::string& key : {"worker_" + name, name}) {
      if (const std::string* t = text(key)) {
        int64_t v = 0;
        const auto [end, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
        if (ec == std::errc() && end == t->data() + t->size()) return v;
      }
    }
    return 0;
  }

 private:
  std::vector<NamedValue> values_;
  bool ok_ = false;
};

}  // namespace

SmLimits sm_limits(std::string_view arch) {
  SmLimits l;
  if (arch == "sm_80" || arch == "sm_87") {
    l.shared_bytes = 167936;  // 164 KiB
  } else if (arch == "sm_86" || arch == "sm_89") {
    l.shared_bytes = 102400;  // 100 KiB
    l.threads = 1536;
    l.blocks = arch == "sm_89" ? 24 : 16;
  } else if (arch == "sm_75") {
    l.shared_bytes = 65536;
    l.threads = 1024;
    l.blocks = 16;
  }
  return l;
}

void set_occupancy(CompiledResources& r, const SmLimits& limits) {
  r.blocks_per_sm.reset();
  r.limited_by.clear();
  if (r.threads_per_block <= 0 || r.registers <= 0) return;
  // Registers are given a warp at a time in units of 256.
  const int64_t warps = (r.threads_per_block + 31) / 32;
  const int64_t registers_per_block = ceil_to(r.registers * 32, 256) * warps;
  const std::pair<int64_t, const char*> limits_by[] = {
      {limits.blocks, "blocks"},
      {limits.threads / r.threads_per_block, "threads"},
      {limits.registers / registers_per_block, "registers"},
      {r.shared_bytes > 0 ? limits.shared_bytes / (r.shared_bytes + limits.reserved_shared) : limits.blocks,
       "shared memory"},
  };
  const auto lowest = std::min_element(std::begin(limits_by), std::end(limits_by),
                                       [](const auto& a, const auto& b) { return a.first < b.first; });
  r.blocks_per_sm = lowest->first;
  r.limited_by = lowest->second;
}

std::optional<CompiledResources> compiled_resources(const ReportRow& row) {
  const Fields f(row.stored.m.resources_json);
  if (!f.ok()) return std::nullopt;
  CompiledResources r;
  r.registers = f.integer("registers");
  if (r.registers <= 0) return std::nullopt;
  r.shared_bytes = f.has("worker_static_shared_bytes")
                       ? f.integer("static_shared_bytes") + f.integer("dynamic_shared_bytes")
                       : f.integer("static_smem_bytes") + f.integer("dynamic_smem_bytes");
  r.spill_bytes = f.integer("spill_store_bytes") + f.integer("spill_load_bytes");
  r.threads_per_block = f.integer("threads_per_block");
  if (const std::string* arch = f.text("arch")) r.arch = *arch;
  set_occupancy(r, sm_limits(r.arch));
  return r;
}

std::vector<std::pair<size_t, CompiledResources>> kernel_resources(const ReportData& data,
                                                                   std::string_view kernel) {
  std::vector<std::pair<size_t, CompiledResources>> out;
  for (size_t i = 0; i < data.rows.size(); ++i) {
    const ReportRow& row = data.rows[i];
    if (row.stored.kernel.name != kernel || !data.listed(row)) continue;
    if (auto r = compiled_resources(row)) out.emplace_back(i, std::move(*r));
  }
  return out;
}

std::string bytes_text(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  const double kib = static_cast<double>(bytes) / 1024.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f KiB", kib);
  return buf;
}

std::string occupancy_text(const CompiledResources& r) {
  if (!r.blocks_per_sm) return "–";
  return std::to_string(*r.blocks_per_sm) + " (" + r.limited_by + ")";
}

}  // namespace ktune::reports
