#include "reports/json_reporter.hpp"

#include <iterator>

#include <fmt/format.h>

#include "reports/compile_only.hpp"
#include "reports/escape.hpp"
#include "reports/number_format.hpp"
#include "reports/resource_table.hpp"

namespace ktune::reports {
namespace {

/// Bytes buffered before a write to the stream.
constexpr size_t kFlushBytes = 1 << 20;

/// Writes one JSON object's `"name":value` members with the commas in the right places; end()
/// closes it.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  ObjectWriter(const ObjectWriter&) = delete;
  ObjectWriter& operator=(const ObjectWriter&) = delete;

  void end() { out_ += '}'; }

  void key(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, name);
    out_ += ':';
  }
  void string(std::string_view name, std::string_view value) {
    key(name);
    append_json_string(out_, value);
  }
  void number(std::string_view name, std::optional<double> value) {
    key(name);
    append_json_number(out_, value);
  }
  void integer(std::string_view name, int64_t value) {
    key(name);
    fmt::format_to(std::back_inserter(out_), "{}", value);
  }
  void boolean(std::string_view name, bool value) {
    key(name);
    out_ += value ? "true" : "false";
  }
  /// `json` must already be valid JSON text.
  void raw(std::string_view name, std::string_view json) {
    key(name);
    out_ += json;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

void append_dims(std::string& out, const ReportRow& row) {
  ObjectWriter dims(out);
  for (const auto& [name, value] : row.dims) dims.integer(name, value);
  dims.end();
}

void append_stats(std::string& out, const std::optional<cache::Stats>& stats) {
  if (!stats) {
    out += "null";
    return;
  }
  ObjectWriter o(out);
  o.number("median_us", stats->median_us);
  o.number("min_us", stats->min_us);
  o.number("mean_us", stats->mean_us);
  o.number("p90_us", stats->p90_us);
  o.number("stdev_us", stats->stdev_us);
  o.integer("samples", stats->samples);
  o.end();
}

/// The compiled resources and the occupancy they allow (reports/resource_table.hpp), or null.
void append_compiled(std::string& out, const ReportRow& row) {
  const auto r = compiled_resources(row);
  if (!r) {
    out += "null";
    return;
  }
  ObjectWriter o(out);
  o.integer("registers", r->registers);
  o.integer("shared_bytes", r->shared_bytes);
  o.integer("spill_bytes", r->spill_bytes);
  o.integer("threads_per_block", r->threads_per_block);
  o.string("arch", r->arch);
  o.number("blocks_per_sm",
           r->blocks_per_sm ? std::optional<double>(static_cast<double>(*r->blocks_per_sm)) : std::nullopt);
  o.string("limited_by", r->limited_by);
  o.end();
}

void append_row(std::string& out, const ReportData& data, const ReportRow& row) {
  const cache::StoredMeasurement& s = row.stored;
  const ReportKey& key = data.keys[row.key];
  ObjectWriter o(out);
  o.integer("id", s.id);
  o.integer("run_id", s.run_id);
  o.string("measured_at", s.measured_at);
  o.integer("gpu", static_cast<int64_t>(row.gpu));
  o.string("kernel", s.kernel.name);
  o.string("kernel_hash", s.kernel.source_hash);
  o.string("config_name", s.m.config_name);
  o.raw("config", s.m.config_json);
  o.string("shape", s.m.shape);
  o.key("dims");
  append_dims(out, row);
  o.string("dtype", to_string(s.m.dtype));
  o.string("layout", s.m.layout);
  o.string("outcome", outcome_name(s.m.outcome));
  o.string("reason", s.m.reason);
  o.string("baseline", s.m.baseline);
  o.boolean("winner", row.winner);
  o.boolean("verified", s.m.verified);
  o.key("stats");
  append_stats(out, s.m.stats);
  o.number("sm_clock_mhz", s.m.sm_clock_mhz);
  o.number("temperature_c", s.m.temperature_c);
  o.raw("counters", s.m.counters_json);
  o.raw("resources", s.m.resources_json);
  o.key("compiled");
  append_compiled(out, row);
  o.number("flops", row.work.flops);
  o.number("bytes", row.work.bytes);
  o.number("tflops", row.roofline.tflops);
  o.number("gbps", row.roofline.gbps);
  o.number("pct_of_ceiling", row.roofline.pct_of_ceiling);
  o.string("bound", row.roofline.bound);
  o.string("baseline_name", key.baseline ? std::string_view(data.rows[*key.baseline].stored.m.baseline) : "");
  o.number("speedup", row.speedup);
  o.end();
}

void append_header(std::string& out, const ReportData& data, ObjectWriter& doc) {
  doc.string("format", "ktune-report");
  doc.integer("format_version", 1);
  doc.string("ktune_version", data.ktune_version);
  doc.string("generated_at", data.generated_at);
  doc.string("db", data.db_path);
  doc.key("filter");
  {
    ObjectWriter f(out);
    f.string("gpu", data.filter.gpu_name);
    f.string("kernel", data.filter.kernel);
    f.string("dtype", data.filter.dtype ? to_string(*data.filter.dtype) : "");
    if (data.filter.run_id) {
      f.integer("run_id", *data.filter.run_id);
    } else {
      f.raw("run_id", "null");
    }
    f.boolean("winners_only", data.winners_only);
    f.end();
  }
  doc.key("gpus");
  out += '[';
  for (size_t i = 0; i < data.gpus.size(); ++i) {
    const cache::GpuInfo& gpu = data.gpus[i];
    if (i > 0) out += ',';
    ObjectWriter g(out);
    g.integer("index", static_cast<int64_t>(i));
    g.string("name", gpu.name);
    g.string("cc", fmt::format("{}.{}", gpu.cc_major, gpu.cc_minor));
    g.integer("sm_count", gpu.sm_count);
    g.integer("memory_bytes", gpu.memory_bytes);
    g.raw("ceilings", gpu.ceilings_json);
    g.end();
  }
  out += ']';
  doc.key("runs");
  out += '[';
  for (size_t i = 0; i < data.runs.size(); ++i) {
    const ReportRun& run = data.runs[i];
    if (i > 0) out += ',';
    ObjectWriter r(out);
    r.integer("id", run.id);
    r.string("started_at", run.info.started_at);
    r.string("host", run.info.host);
    r.string("ktune_version", run.info.ktune_version);
    r.string("arguments", run.info.arguments);
    r.string("driver_version", run.info.driver_version);
    r.string("cuda_version", run.info.cuda_version);
    r.end();
  }
  out += ']';
}

/// Per kernel: whether its rows come from a compile-only sweep, and why it has no winner ("" when
/// it has one).
void append_kernels(std::string& out, const ReportData& data) {
  out += '[';
  for (size_t i = 0; i < data.kernels.size(); ++i) {
    if (i > 0) out += ',';
    ObjectWriter k(out);
    k.string("name", data.kernels[i]);
    k.boolean("compile_only", compile_only_kernel(data, data.kernels[i]));
    k.string("no_winner", no_winner_note(data, data.kernels[i]));
    k.end();
  }
  out += ']';
}

void append_winners(std::string& out, const ReportData& data) {
  out += '[';
  bool first = true;
  for (const ReportKey& key : data.keys) {
    if (!key.winner) continue;
    if (!first) out += ',';
    first = false;
    const ReportRow& w = data.rows[*key.winner];
    ObjectWriter o(out);
    o.integer("gpu", static_cast<int64_t>(key.gpu));
    o.string("kernel", key.kernel);
    o.string("kernel_hash", key.source_hash);
    o.string("shape", key.shape);
    o.string("dtype", to_string(key.dtype));
    o.string("layout", key.layout);
    o.integer("measurement_id", w.stored.id);
    o.string("config_name", w.stored.m.config_name);
    o.raw("config", w.stored.m.config_json);
    o.boolean("verified", w.stored.m.verified);
    o.number("median_us", w.median_us());
    o.string("baseline_name",
             key.baseline ? std::string_view(data.rows[*key.baseline].stored.m.baseline) : "");
    o.number("baseline_median_us",
             key.baseline ? std::optional(data.rows[*key.baseline].median_us()) : std::nullopt);
    o.number("speedup", w.speedup);
    o.number("tflops", w.roofline.tflops);
    o.number("gbps", w.roofline.gbps);
    o.number("pct_of_ceiling", w.roofline.pct_of_ceiling);
    o.string("bound", w.roofline.bound);
    o.raw("counters", w.stored.m.counters_json);
    o.end();
  }
  out += ']';
}

}  // namespace

void JsonReporter::write(const ReportData& data, std::ostream& out) const {
  std::string buf;
  buf.reserve(kFlushBytes + (kFlushBytes >> 2));
  ObjectWriter doc(buf);
  append_header(buf, data, doc);
  doc.key("kernels");
  append_kernels(buf, data);
  doc.key("winners");
  append_winners(buf, data);
  doc.key("measurements");
  buf += '[';
  bool first = true;
  for (const ReportRow& row : data.rows) {
    if (!data.listed(row)) continue;
    if (!first) buf += ',';
    first = false;
    buf += '\n';
    append_row(buf, data, row);
    if (buf.size() >= kFlushBytes) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  buf += "]\n";
  doc.end();
  buf += '\n';
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace ktune::reports
