#include "reports/csv_reporter.hpp"

#include <iterator>

#include <fmt/format.h>

#include "reports/escape.hpp"
#include "reports/number_format.hpp"
#include "reports/resource_table.hpp"

namespace ktune::reports {
namespace {

/// Bytes buffered before a write to the stream (large enough that stream calls do not show).
constexpr size_t kFlushBytes = 1 << 20;

/// Appends the value named `name` from a sorted list, or nothing; advances `cursor` (both lists
/// are sorted, so one pass over a row's values serves all columns).
void append_sorted(std::string& out, const std::vector<NamedValue>& values, size_t& cursor,
                   const std::string& name) {
  while (cursor < values.size() && values[cursor].first < name) ++cursor;
  if (cursor < values.size() && values[cursor].first == name) append_csv_field(out, values[cursor].second);
}

void append_integer(std::string& out, int64_t value) { fmt::format_to(std::back_inserter(out), "{}", value); }

}  // namespace

void CsvReporter::write(const ReportData& data, std::ostream& out) const {
  std::string buf;
  buf.reserve(kFlushBytes + (kFlushBytes >> 2));
  const auto cell = [&](std::string_view text) {
    append_csv_field(buf, text);
    buf += ',';
  };
  for (const char* name : {"measurement_id", "run_id", "run_started_at", "measured_at", "gpu", "gpu_cc",
                           "gpu_sm_count", "gpu_memory_bytes", "kernel", "kernel_hash", "config_name"}) {
    cell(name);
  }
  for (const std::string& p : data.param_columns) cell("param_" + p);
  cell("shape");
  for (const std::string& d : data.dim_columns) cell("dim_" + d);
  for (const char* name : {"dtype",
                           "outcome",
                           "reason",
                           "baseline",
                           "winner",
                           "median_us",
                           "min_us",
                           "mean_us",
                           "p90_us",
                           "stdev_us",
                           "samples",
                           "sm_clock_mhz",
                           "temperature_c",
                           "flops",
                           "bytes",
                           "tflops",
                           "gbps",
                           "pct_of_ceiling",
                           "bound",
                           "baseline_name",
                           "baseline_median_us",
                           "speedup",
                           "layout",
                           "timing",
                           "verified",
                           "registers",
                           "shared_bytes",
                           "spill_bytes",
                           "threads_per_block",
                           "blocks_per_sm",
                           "occupancy_limited_by"}) {
    cell(name);
  }
  for (const std::string& c : data.counter_columns) cell("counter_" + c);
  buf.back() = '\r';
  buf += '\n';

  std::vector<std::string> gpu_cc;
  for (const cache::GpuInfo& gpu : data.gpus)
    gpu_cc.push_back(fmt::format("{}.{}", gpu.cc_major, gpu.cc_minor));

  for (const ReportRow& row : data.rows) {
    if (!data.listed(row)) continue;
    const cache::StoredMeasurement& s = row.stored;
    const cache::GpuInfo& gpu = data.gpus[row.gpu];
    const ReportKey& key = data.keys[row.key];
    const ReportRow* baseline = key.baseline ? &data.rows[*key.baseline] : nullptr;
    const auto number = [&](std::optional<double> value) {
      append_number(buf, value);
      buf += ',';
    };
    const auto integer = [&](int64_t value) {
      append_integer(buf, value);
      buf += ',';
    };
    integer(s.id);
    integer(s.run_id);
    cell(s.run_started_at);
    cell(s.measured_at);
    cell(gpu.name);
    cell(gpu_cc[row.gpu]);
    integer(gpu.sm_count);
    integer(gpu.memory_bytes);
    cell(s.kernel.name);
    cell(s.kernel.source_hash);
    cell(s.m.config_name);
    size_t cursor = 0;
    for (const std::string& p : data.param_columns) {
      append_sorted(buf, row.params, cursor, p);
      buf += ',';
    }
    cell(s.m.shape);
    for (const std::string& d : data.dim_columns) {
      for (const auto& [name, value] : row.dims) {
        if (name == d) append_integer(buf, value);
      }
      buf += ',';
    }
    cell(to_string(s.m.dtype));
    cell(outcome_name(s.m.outcome));
    cell(s.m.reason);
    cell(s.m.baseline);
    cell(row.winner ? "true" : "false");
    const std::optional<cache::Stats>& st = s.m.stats;
    number(st ? std::optional(st->median_us) : std::nullopt);
    number(st ? std::optional(st->min_us) : std::nullopt);
    number(st ? std::optional(st->mean_us) : std::nullopt);
    number(st ? std::optional(st->p90_us) : std::nullopt);
    number(st ? std::optional(st->stdev_us) : std::nullopt);
    if (st) append_integer(buf, st->samples);
    buf += ',';
    number(s.m.sm_clock_mhz);
    number(s.m.temperature_c);
    number(row.work.flops);
    number(row.work.bytes);
    number(row.roofline.tflops);
    number(row.roofline.gbps);
    number(row.roofline.pct_of_ceiling);
    cell(row.roofline.bound);
    cell(baseline ? std::string_view(baseline->stored.m.baseline) : std::string_view());
    number(baseline ? std::optional(baseline->median_us()) : std::nullopt);
    number(row.speedup);
    cell(s.m.layout);
    cell(row.timing);
    cell(s.m.verified ? "true" : "false");
    if (const auto r = compiled_resources(row)) {
      integer(r->registers);
      integer(r->shared_bytes);
      integer(r->spill_bytes);
      integer(r->threads_per_block);
      if (r->blocks_per_sm) append_integer(buf, *r->blocks_per_sm);
      buf += ',';
      cell(r->limited_by);
    } else {
      buf += ",,,,,,";
    }
    cursor = 0;
    for (const std::string& c : data.counter_columns) {
      append_sorted(buf, row.counters, cursor, c);
      buf += ',';
    }
    buf.back() = '\r';
    buf += '\n';
    if (buf.size() >= kFlushBytes) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace ktune::reports
