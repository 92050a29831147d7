#include "reports/counter_table.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "reports/number_format.hpp"

namespace ktune::reports {
namespace {

using nlohmann::json;

/// Bookkeeping of the CUPTI pass (how it ran, not what it measured): left out of the table.
bool bookkeeping(std::string_view name) {
  return name == "available" || name == "passes" || name == "ranges" || name == "dropped_ranges" ||
         name == "ms";
}

/// A metric's value as a table cell.
std::string cell_text(const json& value) {
  if (value.is_number()) return human(value.get<double>());
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return value.dump();
}

struct Parsed {
  std::map<std::string, std::string> metrics;
  std::string note;
};

Parsed parse_counters(std::string_view counters_json) {
  Parsed p;
  const json object = json::parse(counters_json, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return p;
  const auto nested = object.find("metrics");
  const bool cupti_record = nested != object.end() && nested->is_object();
  if (cupti_record) {
    for (const auto& [name, value] : nested->items()) p.metrics[name] = cell_text(value);
  }
  for (const auto& [name, value] : object.items()) {
    if (name == "metrics" && cupti_record) continue;
    if (value.is_string() && (name == "reason" || name.ends_with("_reason"))) {
      if (!p.note.empty()) p.note += "; ";
      p.note += value.get<std::string>();
    } else if (!cupti_record && !bookkeeping(name)) {
      p.metrics[name] = cell_text(value);
    }
  }
  return p;
}

}  // namespace

std::string counter_unit(std::string_view metric) {
  const auto has = [&](std::string_view part) { return metric.find(part) != std::string_view::npos; };
  if (has(".pct")) return "%";
  if (has(".ratio")) return "ratio";
  std::string unit;
  if (has("__time_duration") || has("_time_"))
    unit = "ns";
  else if (has("__bytes") || has("_bytes"))
    unit = "bytes";
  else if (has("__cycles") || has("_cycles"))
    unit = "cycles";
  else if (has("__inst") || has("_inst_"))
    unit = "instructions";
  else if (has("__sectors") || has("_sectors"))
    unit = "sectors";
  else if (has("__warps") || has("_warps"))
    unit = "warps";
  else if (has("__registers") || has("_registers"))
    unit = "registers";
  if (has(".per_second")) return unit.empty() ? "/s" : unit + "/s";
  if (has(".per_cycle")) return unit.empty() ? "/cycle" : unit + "/cycle";
  return unit;
}

bool CounterTable::has_notes() const {
  return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return !r.note.empty(); });
}

CounterTable counter_table(const ReportData& data, std::string_view kernel) {
  std::vector<std::pair<size_t, Parsed>> parsed;
  std::set<std::string> names;
  for (size_t k = 0; k < data.keys.size(); ++k) {
    const ReportKey& key = data.keys[k];
    if (key.kernel != kernel || !key.winner) continue;
    Parsed p = parse_counters(data.rows[*key.winner].stored.m.counters_json);
    for (const auto& m : p.metrics) names.insert(m.first);
    parsed.emplace_back(k, std::move(p));
  }
  CounterTable table;
  table.columns.assign(names.begin(), names.end());
  for (auto& [k, p] : parsed) {
    CounterTable::Row row;
    row.key = k;
    row.note = std::move(p.note);
    for (const std::string& name : table.columns) {
      const auto it = p.metrics.find(name);
      row.cells.push_back(it != p.metrics.end() ? it->second : std::string());
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace ktune::reports
