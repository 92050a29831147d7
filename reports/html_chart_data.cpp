#include "reports/html_chart_data.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ktune::reports {
namespace {

using nlohmann::json;

/// Points in one roofline chart: more are sampled evenly; 4000 draw in well under 100 ms.
constexpr size_t kMaxRooflinePoints = 4000;
/// Bars in one per-shape chart; past ~200 the labels cannot be read at any width.
constexpr size_t kMaxChartKeys = 200;
/// Distinct values on one heat-map axis (a config space axis rarely has more than ~16).
constexpr size_t kMaxHeatmapValues = 40;

std::string key_label(const ReportData& data, const ReportKey& key) {
  std::string label = fmt::format("{} {}", key.shape, to_string(key.dtype));
  if (!key.layout.empty()) label += " " + key.layout;
  if (data.gpus.size() > 1) label += " @ " + data.gpus[key.gpu].name;
  return label;
}

bool listed_candidate(const ReportData& data, const ReportRow& row) {
  return data.listed(row) && row.timed_ok() && row.stored.m.baseline.empty();
}

std::vector<const ReportKey*> kernel_keys(const ReportData& data, const std::string& kernel) {
  std::vector<const ReportKey*> keys;
  for (const ReportKey& key : data.keys) {
    if (key.kernel == kernel && keys.size() < kMaxChartKeys) keys.push_back(&key);
  }
  return keys;
}

json speedup_chart(const ReportData& data, const std::vector<const ReportKey*>& keys) {
  json labels = json::array(), values = json::array(), baselines = json::array();
  for (const ReportKey* key : keys) {
    if (!key->winner || !key->baseline) continue;
    const ReportRow& w = data.rows[*key->winner];
    if (!w.speedup) continue;
    labels.push_back(key_label(data, *key));
    values.push_back(*w.speedup);
    baselines.push_back(data.rows[*key->baseline].stored.m.baseline);
  }
  if (labels.empty()) return nullptr;
  return {{"labels", labels}, {"values", values}, {"baselines", baselines}};
}

json roofline_chart(const ReportData& data, const std::string& kernel) {
  std::vector<const ReportRow*> rows;
  bool any_flops = false;
  bool any_bytes = false;
  for (const ReportRow& row : data.rows) {
    if (row.stored.kernel.name != kernel || !data.listed(row) || !row.timed_ok()) continue;
    any_flops |= row.roofline.tflops.has_value() && row.work.bytes.has_value();
    any_bytes |= row.roofline.gbps.has_value();
    rows.push_back(&row);
  }
  if (!any_flops && !any_bytes) return nullptr;  // no work stored for this kernel: throughput unknown
  const std::string mode = any_flops ? "flops" : "bytes";
  // Each point is [x, y, shape]: an index into `shapes`, one label a key (shape, dtype, layout,
  // GPU), so that 4000 points do not repeat their names.
  json shapes = json::array(), points = json::array(), winners = json::array(), winner_labels = json::array(),
       baselines = json::array(), baseline_labels = json::array();
  std::map<size_t, size_t> shape_of_key;
  const auto shape_index = [&](const ReportRow& r) {
    const auto [it, added] = shape_of_key.try_emplace(r.key, shapes.size());
    if (added) shapes.push_back(key_label(data, data.keys[r.key]));
    return it->second;
  };
  const auto xy = [&](const ReportRow& r) -> std::optional<std::pair<double, double>> {
    if (mode == "flops" && r.roofline.tflops && r.work.bytes && *r.work.bytes > 0) {
      return std::pair(*r.work.flops / *r.work.bytes, *r.roofline.tflops);
    }
    if (mode == "bytes" && r.roofline.gbps) return std::pair(*r.work.bytes, *r.roofline.gbps);
    return std::nullopt;
  };
  const size_t stride = std::max<size_t>(1, (rows.size() + kMaxRooflinePoints - 1) / kMaxRooflinePoints);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& r = *rows[i];
    const auto p = xy(r);
    if (!p) continue;
    if (r.winner) {
      winners.push_back({p->first, p->second, shape_index(r)});
      winner_labels.push_back(r.stored.m.config_name);
    } else if (!r.stored.m.baseline.empty()) {
      baselines.push_back({p->first, p->second, shape_index(r)});
      baseline_labels.push_back(r.stored.m.baseline);
    } else if (i % stride == 0) {
      points.push_back({p->first, p->second, shape_index(r)});
    }
  }
  if (points.empty() && winners.empty() && baselines.empty()) return nullptr;
  json ceilings = json::array();
  std::set<std::pair<size_t, DType>> seen;
  for (const ReportRow* r : rows) {
    if (!seen.emplace(r->gpu, r->stored.m.dtype).second) continue;
    const Ceilings c = ceilings_for(data.gpus[r->gpu].ceilings_json, r->stored.m.dtype);
    if (!c.gbps && (mode == "bytes" || !c.tflops)) continue;  // GB/s against bytes: bandwidth only
    json entry = {{"label", fmt::format("{} {}", data.gpus[r->gpu].name, to_string(r->stored.m.dtype))}};
    entry["tflops"] = c.tflops ? json(*c.tflops) : json();
    entry["gbps"] = c.gbps ? json(*c.gbps) : json();
    ceilings.push_back(entry);
  }
  return {{"mode", mode},
          {"shapes", shapes},
          {"points", points},
          {"winners", winners},
          {"winner_labels", winner_labels},
          {"baselines", baselines},
          {"baseline_labels", baseline_labels},
          {"ceilings", ceilings},
          {"sampled_every", stride}};
}

/// Orders parameter values numerically when both are numbers, else as text.
bool value_less(const std::string& a, const std::string& b) {
  double x = 0, y = 0;
  const bool nx = std::from_chars(a.data(), a.data() + a.size(), x).ec == std::errc{};
  const bool ny = std::from_chars(b.data(), b.data() + b.size(), y).ec == std::errc{};
  if (nx && ny && x != y) return x < y;
  if (nx != ny) return nx;
  return a < b;
}

json heatmap_chart(const ReportData& data, const std::vector<const ReportKey*>& keys) {
  const ReportKey* chosen = nullptr;
  size_t chosen_count = 0;
  for (const ReportKey* key : keys) {
    size_t count = 0;
    for (const size_t i : key->rows) count += listed_candidate(data, data.rows[i]) ? 1 : 0;
    if (count > chosen_count) chosen = key, chosen_count = count;
  }
  if (!chosen) return nullptr;
  // One template's configs, over that template's own parameters: templates name different
  // parameters (WARPS against WARPS_M), so a map over all of them would be mostly holes. The
  // template with the most configs of the key is drawn.
  const auto template_of = [](const ReportRow& row) {
    for (const auto& [name, value] : row.params) {
      if (name == "template") return value;
    }
    return std::string();
  };
  std::map<std::string, size_t> per_template;
  for (const size_t i : chosen->rows) {
    if (listed_candidate(data, data.rows[i])) ++per_template[template_of(data.rows[i])];
  }
  const std::string tmpl =
      std::max_element(per_template.begin(), per_template.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      })->first;
  const auto in_map = [&](const ReportRow& row) {
    return listed_candidate(data, row) && template_of(row) == tmpl;
  };
  using ValueSet = std::set<std::string, decltype(&value_less)>;
  std::map<std::string, ValueSet> values;
  for (const size_t i : chosen->rows) {
    const ReportRow& row = data.rows[i];
    if (!in_map(row)) continue;
    for (const auto& [name, value] : row.params) {
      if (name != "template") values.try_emplace(name, &value_less).first->second.insert(value);
    }
  }
  std::vector<std::pair<size_t, std::string>> varying;  // (distinct count, name)
  for (const auto& [name, set] : values) {
    if (set.size() >= 2 && set.size() <= kMaxHeatmapValues) varying.emplace_back(set.size(), name);
  }
  if (varying.size() < 2) return nullptr;
  std::stable_sort(varying.begin(), varying.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::string& px = varying[0].second;
  const std::string& py = varying[1].second;
  const std::vector<std::string> xs(values.at(px).begin(), values.at(px).end());
  const std::vector<std::string> ys(values.at(py).begin(), values.at(py).end());
  const auto index = [](const std::vector<std::string>& v, const std::string& s) {
    return static_cast<size_t>(std::lower_bound(v.begin(), v.end(), s, value_less) - v.begin());
  };
  std::map<std::pair<size_t, size_t>, double> best;  // fastest over the other parameters
  for (const size_t i : chosen->rows) {
    const ReportRow& row = data.rows[i];
    if (!in_map(row)) continue;
    const std::string* vx = nullptr;
    const std::string* vy = nullptr;
    for (const auto& [name, value] : row.params) {
      if (name == px) vx = &value;
      if (name == py) vy = &value;
    }
    if (!vx || !vy) continue;
    const auto cell = std::pair(index(xs, *vx), index(ys, *vy));
    const auto [it, inserted] = best.try_emplace(cell, row.median_us());
    if (!inserted) it->second = std::min(it->second, row.median_us());
  }
  json cells = json::array();
  for (const auto& [cell, us] : best) cells.push_back({cell.first, cell.second, us});
  const std::string label = tmpl.empty() ? key_label(data, *chosen) : key_label(data, *chosen) + " · " + tmpl;
  return {{"key", label}, {"template", tmpl}, {"x", px}, {"y", py}, {"xs", xs}, {"ys", ys}, {"cells", cells}};
}

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

json spread_chart(const ReportData& data, const std::vector<const ReportKey*>& keys) {
  json labels = json::array(), p10 = json::array(), p50 = json::array(), p90 = json::array(),
       max = json::array(), count = json::array();
  for (const ReportKey* key : keys) {
    if (!key->winner) continue;
    const double winner_us = data.rows[*key->winner].median_us();
    if (!(winner_us > 0)) continue;
    std::vector<double> ratios;
    for (const size_t i : key->rows) {
      if (listed_candidate(data, data.rows[i])) ratios.push_back(data.rows[i].median_us() / winner_us);
    }
    if (ratios.empty()) continue;
    std::sort(ratios.begin(), ratios.end());
    labels.push_back(key_label(data, *key));
    p10.push_back(quantile(ratios, 0.1));
    p50.push_back(quantile(ratios, 0.5));
    p90.push_back(quantile(ratios, 0.9));
    max.push_back(ratios.back());
    count.push_back(ratios.size());
  }
  if (labels.empty()) return nullptr;
  return {{"labels", labels}, {"p10", p10}, {"p50", p50}, {"p90", p90}, {"max", max}, {"count", count}};
}

json outcome_chart(const ReportData& data, const std::string& kernel) {
  std::array<int64_t, kOutcomeCount> counts{};
  for (const ReportRow& row : data.rows) {
    if (row.stored.kernel.name != kernel || !data.listed(row)) continue;
    const auto o = static_cast<size_t>(row.stored.m.outcome);
    if (o < kOutcomeCount) ++counts[o];
  }
  if (std::all_of(counts.begin(), counts.end(), [](int64_t n) { return n == 0; })) return nullptr;
  json labels = json::array(), values = json::array();
  for (size_t i = 0; i < kOutcomeCount; ++i) {
    labels.push_back(outcome_name(static_cast<ktune::Outcome>(i)));
    values.push_back(counts[i]);
  }
  return {{"labels", labels}, {"counts", values}};
}

}  // namespace

json html_chart_data(const ReportData& data) {
  json kernels = json::array();
  for (const std::string& kernel : data.kernels) {
    const std::vector<const ReportKey*> keys = kernel_keys(data, kernel);
    kernels.push_back({{"name", kernel},
                       {"speedup", speedup_chart(data, keys)},
                       {"roofline", roofline_chart(data, kernel)},
                       {"heatmap", heatmap_chart(data, keys)},
                       {"spread", spread_chart(data, keys)},
                       {"outcomes", outcome_chart(data, kernel)}});
  }
  return {{"kernels", kernels}};
}

}  // namespace ktune::reports
