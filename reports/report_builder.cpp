#include "reports/report_builder.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/escape.hpp"
#include "reports/flat_json.hpp"

namespace ktune::reports {
namespace {

/// "rotate, graph x37" from a measurement's resources: the worker's keys carry a "worker_" prefix
/// (the tuner merges them with the compile's), the cuBLAS baseline's none.
std::string timing_of(const std::string& resources_json) {
  const auto j = nlohmann::json::parse(resources_json, nullptr, false);
  if (!j.is_object()) return {};
  for (const char* prefix : {"worker_", ""}) {
    const auto flush = j.find(std::string(prefix) + "flush");
    const auto batch = j.find(std::string(prefix) + "launches_per_sample");
    if (flush == j.end() || !flush->is_string()) continue;
    std::string out = flush->get<std::string>();
    if (batch != j.end() && batch->is_number_integer()) {
      const int64_t n = batch->get<int64_t>();
      out += n > 1 ? fmt::format(", graph x{}", n) : std::string(", events");
    }
    return out;
  }
  return {};
}

/// `text` when it is a JSON object, else "{}" (writers embed it unchanged: a text that passes the
/// parser is valid JSON in valid UTF-8).
void keep_object(std::string& text) {
  if (!is_json_object(text)) text = "{}";
}

/// The members of a stored JSON object; `text` becomes "{}" when it is not one.
std::vector<NamedValue> members(std::string& text) {
  std::vector<NamedValue> out;
  if (!flatten_json_object(text, out)) text = "{}";
  return out;
}

/// A config's members, with a template config's `params` object opened up: {"template": "gemv",
/// "params": {"WARPS": 4}} gives template=gemv and WARPS=4 (one report column a parameter), sorted.
std::vector<NamedValue> config_members(std::string& text) {
  std::vector<NamedValue> out = members(text);
  const auto params =
      std::find_if(out.begin(), out.end(), [](const NamedValue& v) { return v.first == "params"; });
  if (params == out.end()) return out;
  std::vector<NamedValue> inner;
  if (!flatten_json_object(params->second, inner)) return out;
  out.erase(params);
  for (NamedValue& v : inner) {
    if (std::none_of(out.begin(), out.end(), [&](const NamedValue& o) { return o.first == v.first; }))
      out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// `m=16,n=4096` as pairs; parts that are not name=integer are left out (a report never fails
/// on one odd row).
std::vector<std::pair<std::string, int64_t>> parse_dims(std::string_view shape) {
  std::vector<std::pair<std::string, int64_t>> dims;
  while (!shape.empty()) {
    const size_t comma = std::min(shape.find(','), shape.size());
    const std::string_view part = shape.substr(0, comma);
    shape.remove_prefix(std::min(comma + 1, shape.size()));
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    int64_t value = 0;
    const std::string_view text = part.substr(eq + 1);
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) continue;
    dims.emplace_back(std::string(part.substr(0, eq)), value);
  }
  return dims;
}

std::string gpu_key(const cache::GpuInfo& gpu) {
  return fmt::format("{}\x1f{}.{}\x1f{}\x1f{}", gpu.name, gpu.cc_major, gpu.cc_minor, gpu.sm_count,
                     gpu.memory_bytes);
}

/// Baselines the speed-up prefers, best first; any other name ranks after them.
int baseline_rank(const std::string& name) {
  if (name == "cublas") return 0;
  if (name == "cublaslt") return 1;
  if (name == "default") return 2;
  return 3;
}

void sanitize(cache::StoredMeasurement& s) {
  for (std::string* text :
       {&s.gpu.name, &s.kernel.name, &s.kernel.source_hash, &s.m.shape, &s.m.layout, &s.m.config_name,
        &s.m.reason, &s.m.baseline, &s.run_started_at, &s.measured_at}) {
    sanitize_utf8_in_place(*text);
  }
}

/// Whether `a` has the same names, in order, as `*b` (false when b is null).
template <typename Pairs>
bool same_names(const Pairs& a, const Pairs* b) {
  return b != nullptr && a.size() == b->size() &&
         std::equal(a.begin(), a.end(), b->begin(),
                    [](const auto& x, const auto& y) { return x.first == y.first; });
}

}  // namespace

std::string_view outcome_name(ktune::Outcome outcome) { return ktune::to_string(outcome); }

ReportBuilder::ReportBuilder(ReportData meta) : data_(std::move(meta)) {}

void ReportBuilder::add_run(int64_t id, const cache::RunInfo& run) {
  cache::RunInfo info = run;
  for (std::string* text : {&info.started_at, &info.host, &info.ktune_version, &info.arguments,
                            &info.driver_version, &info.cuda_version}) {
    *text = sanitize_utf8(*text);
  }
  run_info_[id] = std::move(info);
}

size_t ReportBuilder::gpu_index(const cache::GpuInfo& gpu) {
  const auto [it, inserted] = gpu_index_.try_emplace(gpu_key(gpu), data_.gpus.size());
  if (inserted) {
    data_.gpus.push_back(gpu);
    keep_object(data_.gpus.back().ceilings_json);
  }
  return it->second;
}

void ReportBuilder::add(const cache::StoredMeasurement& measurement) {
  ReportRow row;
  row.stored = measurement;
  cache::StoredMeasurement& s = row.stored;
  sanitize(s);
  row.params = config_members(s.m.config_json);
  row.counters = members(s.m.counters_json);
  keep_object(s.m.resources_json);
  row.timing = timing_of(s.m.resources_json);
  row.dims = parse_dims(s.m.shape);
  row.work = s.m.work;
  row.gpu = gpu_index(s.gpu);

  const std::string key_text = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", row.gpu, s.kernel.name,
                                           s.kernel.source_hash, s.m.shape, to_string(s.m.dtype), s.m.layout);
  const auto [it, inserted] = key_index_.try_emplace(key_text, data_.keys.size());
  if (inserted) {
    ReportKey& key = data_.keys.emplace_back();
    key.gpu = row.gpu;
    key.kernel = s.kernel.name;
    key.source_hash = s.kernel.source_hash;
    key.shape = s.m.shape;
    key.dtype = s.m.dtype;
    key.layout = s.m.layout;
  }
  row.key = it->second;
  ReportKey& key = data_.keys[row.key];
  key.rows.push_back(data_.rows.size());
  const auto outcome = static_cast<size_t>(s.m.outcome);
  if (outcome < kOutcomeCount) ++key.outcome_counts[outcome];
  data_.rows.push_back(std::move(row));
}

void ReportBuilder::mark_best(int64_t measurement_id) { best_ids_.insert(measurement_id); }

void ReportBuilder::choose_baseline(ReportKey& key) {
  for (const size_t i : key.rows) {
    const ReportRow& row = data_.rows[i];
    if (row.stored.m.baseline.empty() || !row.timed_ok()) continue;
    if (!key.baseline) {
      key.baseline = i;
      continue;
    }
    const ReportRow& held = data_.rows[*key.baseline];
    const auto rank = [](const ReportRow& r) {
      return std::make_tuple(baseline_rank(r.stored.m.baseline), std::cref(r.stored.m.baseline));
    };
    // Within one name the latest measurement (a run per tune): the lowest median over several runs
    // would pick the baseline's luckiest sample and understate every speed-up.
    const auto recency = [](const ReportRow& r) { return std::tie(r.stored.measured_at, r.stored.id); };
    if (rank(row) < rank(held) || (rank(row) == rank(held) && recency(row) > recency(held))) key.baseline = i;
  }
}

void ReportBuilder::choose_winner(ReportKey& key) {
  const auto better = [&](size_t a, size_t b) {
    const ReportRow& ra = data_.rows[a];
    const ReportRow& rb = data_.rows[b];
    return std::pair(ra.median_us(), std::string_view(ra.stored.m.config_name)) <
           std::pair(rb.median_us(), std::string_view(rb.stored.m.config_name));
  };
  for (const bool named : {true, false}) {
    for (const size_t i : key.rows) {
      const ReportRow& row = data_.rows[i];
      if (!row.timed_ok()) continue;
      if (named ? !best_ids_.contains(row.stored.id) : !row.stored.m.baseline.empty()) continue;
      if (!key.winner || better(i, *key.winner)) key.winner = i;
    }
    if (key.winner) break;
  }
  if (key.winner) data_.rows[*key.winner].winner = true;
}

ReportData ReportBuilder::finish() {
  std::map<std::pair<size_t, DType>, Ceilings> ceilings;  // (gpu, dtype)
  std::set<std::string> params, dims, counters, kernels;
  std::map<int64_t, std::string> run_starts;
  const std::vector<NamedValue>* last_params = nullptr;
  const std::vector<NamedValue>* last_counters = nullptr;
  const std::vector<std::pair<std::string, int64_t>>* last_dims = nullptr;
  for (ReportKey& key : data_.keys) {
    choose_baseline(key);
    choose_winner(key);
    kernels.insert(key.kernel);
  }
  for (ReportRow& row : data_.rows) {
    // Rows of one kernel share their names; the sets are only walked when the names change.
    if (!same_names(row.params, last_params)) {
      for (const auto& p : row.params) params.insert(p.first);
      last_params = &row.params;
    }
    if (!same_names(row.counters, last_counters)) {
      for (const auto& c : row.counters) counters.insert(c.first);
      last_counters = &row.counters;
    }
    if (!same_names(row.dims, last_dims)) {
      for (const auto& d : row.dims) dims.insert(d.first);
      last_dims = &row.dims;
    }
    run_starts.try_emplace(row.stored.run_id, row.stored.run_started_at);
    if (!row.timed_ok()) continue;
    auto [it, inserted] = ceilings.try_emplace({row.gpu, row.stored.m.dtype});
    if (inserted) it->second = ceilings_for(data_.gpus[row.gpu].ceilings_json, row.stored.m.dtype);
    row.roofline = roofline(row.work, it->second, row.median_us());
    const ReportKey& key = data_.keys[row.key];
    if (key.baseline && row.median_us() > 0)
      row.speedup = data_.rows[*key.baseline].median_us() / row.median_us();
  }
  for (const auto& [id, started_at] : run_starts) {
    const auto it = run_info_.find(id);
    ReportRun run{.id = id, .info = it != run_info_.end() ? it->second : cache::RunInfo{}};
    if (run.info.started_at.empty()) run.info.started_at = started_at;
    data_.runs.push_back(std::move(run));
  }
  data_.param_columns.assign(params.begin(), params.end());
  data_.dim_columns.assign(dims.begin(), dims.end());
  data_.counter_columns.assign(counters.begin(), counters.end());
  data_.kernels.assign(kernels.begin(), kernels.end());
  ReportData out = std::move(data_);
  data_ = ReportData{};
  gpu_index_.clear();
  key_index_.clear();
  run_info_.clear();
  best_ids_.clear();
  return out;
}

}  // namespace ktune::reports
