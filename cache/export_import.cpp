#include <fstream>
#include <iterator>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"
#include "cache/detail/row_importer.hpp"
#include "cache/measurement_json.hpp"
#include "core/dtype.hpp"
#include "core/json_depth.hpp"
#include "core/json_integer.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

using detail::StatementLease;
using nlohmann::json;

/// docs/export-format.md. Raise on any change a reader must know about; import refuses newer ones.
constexpr int kExportFormatVersion = 1;
constexpr const char* kExportFormatName = "ktune-export";

/// Writes `name: [rows...]`, one row a line, streaming from `s`.
template <typename RowFn>
void write_array(std::ostream& out, const char* name, detail::Statement& s, RowFn row, bool last = false) {
  out << "  \"" << name << "\": [";
  bool first = true;
  while (s.step()) {
    out << (first ? "\n    " : ",\n    ") << row(s).dump();
    first = false;
  }
  out << (first ? "]" : "\n  ]") << (last ? "\n" : ",\n");
}

}  // namespace

void ConfigCache::export_json(const std::filesystem::path& out_path) const {
  std::lock_guard lock(impl_->mu);
  detail::Database& db = impl_->db;
  detail::ReadSnapshot snapshot(db);
  std::filesystem::path tmp = out_path;
  tmp += ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorKind::kRuntime, fmt::format("cannot write the export file {}", tmp.string()));
  out << "{\n";
  out << "  \"format\": " << json(kExportFormatName).dump() << ",\n";
  out << "  \"format_version\": " << kExportFormatVersion << ",\n";
  out << "  \"schema_version\": " << kSchemaVersion << ",\n";
  out << "  \"exported_at\": " << json(detail::now_iso()).dump() << ",\n";
  {
    StatementLease s = db.cached(
        "SELECT id, name, cc_major, cc_minor, sm_count, memory_bytes, ceilings_json FROM gpus ORDER BY id");
    write_array(out, "gpus", *s, [](const detail::Statement& r) {
      return json{{"id", r.int64(0)},
                  {"name", r.text(1)},
                  {"cc_major", r.int64(2)},
                  {"cc_minor", r.int64(3)},
                  {"sm_count", r.int64(4)},
                  {"memory_bytes", r.int64(5)},
                  {"ceilings", object_or_text(r.text_view(6))}};
    });
  }
  {
    StatementLease s = db.cached("SELECT id, name, source_hash, registered_at FROM kernels ORDER BY id");
    write_array(out, "kernels", *s, [](const detail::Statement& r) {
      return json{
          {"id", r.int64(0)}, {"name", r.text(1)}, {"source_hash", r.text(2)}, {"registered_at", r.text(3)}};
    });
  }
  {
    StatementLease s = db.cached(
        "SELECT id, started_at, host, ktune_version, arguments, driver_version, cuda_version FROM runs ORDER "
        "BY id");
    write_array(out, "runs", *s, [](const detail::Statement& r) {
      return json{{"id", r.int64(0)},           {"started_at", r.text(1)}, {"host", r.text(2)},
                  {"ktune_version", r.text(3)}, {"arguments", r.text(4)},  {"driver_version", r.text(5)},
                  {"cuda_version", r.text(6)}};
    });
  }
  {
    StatementLease s =
        db.cached(fmt::format("SELECT {} FROM measurements m ORDER BY m.id", detail::kMeasurementColumns));
    write_array(out, "measurements", *s, [](const detail::Statement& r) {
      Measurement m;
      detail::read_measurement(r, m);
      json row = measurement_fields(m);
      row["id"] = r.int64(0);
      row["run_id"] = r.int64(1);
      row["gpu_id"] = r.int64(2);
      row["kernel_id"] = r.int64(3);
      row["measured_at"] = r.text(22);
      return row;
    });
  }
  {
    StatementLease s = db.cached(
        "SELECT gpu_id, kernel_id, shape, dtype, measurement_id, updated_at, layout FROM best"
        " ORDER BY gpu_id, kernel_id, dtype, layout, shape");
    write_array(
        out, "best", *s,
        [](const detail::Statement& r) {
          return json{{"gpu_id", r.int64(0)},   {"kernel_id", r.int64(1)}, {"shape", r.text(2)},
                      {"dtype", r.text(3)},     {"layout", r.text(6)},     {"measurement_id", r.int64(4)},
                      {"updated_at", r.text(5)}};
        },
        /*last=*/true);
  }
  out << "}\n";
  out.close();
  if (!out) throw Error(ErrorKind::kRuntime, fmt::format("writing the export file {} failed", tmp.string()));
  std::error_code ec;
  std::filesystem::rename(tmp, out_path, ec);
  if (ec) {
    throw Error(ErrorKind::kRuntime,
                fmt::format("cannot move {} to {}: {}", tmp.string(), out_path.string(), ec.message()));
  }
}

MergeStats ConfigCache::import_json(const std::filesystem::path& in_path) {
  impl_->require_writable("import");
  std::ifstream in(in_path, std::ios::binary);
  if (!in) throw Error(ErrorKind::kNotFound, fmt::format("cannot read the export file {}", in_path.string()));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Before parsing: a document nested past the bound is refused whole, nothing of it stored.
  if (!json_depth_ok(text)) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} nests JSON deeper than {} levels of arrays and objects",
                                                  in_path.string(), kMaxJsonDepth));
  }
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} is not a JSON document", in_path.string()));
  }
  const json format = doc.value("format", json());
  if (!format.is_string() || format.get<std::string>() != kExportFormatName) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} is not a ktune export (\"format\" is not \"{}\")",
                                                  in_path.string(), kExportFormatName));
  }
  const json version_field = doc.value("format_version", json(0));
  const int version = version_field.is_number_integer() && std::in_range<int>(version_field.get<int64_t>())
                          ? version_field.get<int>()
                          : 0;
  if (version < 1 || version > kExportFormatVersion) {
    throw Error(ErrorKind::kBadInput, fmt::format("{} has export format version {}; this ktune reads 1 to {}",
                                                  in_path.string(), version, kExportFormatVersion));
  }
  const auto text_of = [](const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); };
  const auto opt_num = [](const json& j) {
    return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
  };
  std::lock_guard lock(impl_->mu);
  detail::Transaction tx(impl_->db);
  detail::RowImporter importer(impl_->db, impl_->work_model);
  try {
    for (const json& g : doc.at("gpus")) {
      importer.add_gpu(
          json_integer<int64_t>(g.at("id"), "id"),
          GpuInfo{g.at("name").get<std::string>(), json_integer<int>(g.at("cc_major"), "cc_major"),
                  json_integer<int>(g.at("cc_minor"), "cc_minor"),
                  json_integer<int>(g.at("sm_count"), "sm_count"),
                  json_integer<int64_t>(g.at("memory_bytes"), "memory_bytes"),
                  text_of(g.value("ceilings", json::object()))});
    }
    for (const json& k : doc.at("kernels")) {
      importer.add_kernel({json_integer<int64_t>(k.at("id"), "id"),
                           {k.at("name").get<std::string>(), k.at("source_hash").get<std::string>()},
                           k.value("registered_at", "")});
    }
    for (const json& r : doc.at("runs")) {
      importer.add_run(
          {json_integer<int64_t>(r.at("id"), "id"),
           {r.at("started_at").get<std::string>(), r.value("host", ""), r.value("ktune_version", ""),
            r.value("arguments", ""), r.value("driver_version", ""), r.value("cuda_version", "")}});
    }
    detail::SourceMeasurement row;
    for (const json& j : doc.at("measurements")) {
      row.id = json_integer<int64_t>(j.at("id"), "id");
      row.run_id = json_integer<int64_t>(j.at("run_id"), "run_id");
      row.gpu_id = json_integer<int64_t>(j.at("gpu_id"), "gpu_id");
      row.kernel_id = json_integer<int64_t>(j.at("kernel_id"), "kernel_id");
      Measurement& m = row.m;
      m.shape = j.at("shape").get<std::string>();
      m.dtype = dtype_from_string(j.at("dtype").get<std::string>());
      m.layout = j.value("layout", "");
      m.config_name = j.at("config_name").get<std::string>();
      m.config_json = text_of(j.value("config", json::object()));
      m.outcome = outcome_from_string(j.at("outcome").get<std::string>());
      m.reason = j.value("reason", "");
      const json& st = j.value("stats", json());
      if (st.is_null()) {
        m.stats.reset();
      } else {
        m.stats = Stats{st.at("median_us").get<double>(), st.at("min_us").get<double>(),
                        st.at("mean_us").get<double>(),   st.at("p90_us").get<double>(),
                        st.at("stdev_us").get<double>(),  json_integer<int64_t>(st.at("samples"), "samples")};
      }
      m.counters_json = text_of(j.value("counters", json::object()));
      m.resources_json = text_of(j.value("resources", json::object()));
      m.baseline = j.value("baseline", "");
      m.sm_clock_mhz = opt_num(j.value("sm_clock_mhz", json()));
      m.temperature_c = opt_num(j.value("temperature_c", json()));
      m.fidelity = j.value("fidelity", 1.0);
      m.verified = j.value("verified", true);
      // Absent in exports written before schema 4: the importer asks its work model.
      m.work = Work{opt_num(j.value("work_flops", json())), opt_num(j.value("work_bytes", json()))};
      detail::require_fidelity(m.fidelity, m.config_name);
      row.measured_at = j.value("measured_at", "");
      importer.add_measurement(row);
    }
    for (const json& b : doc.at("best")) {
      importer.add_best({json_integer<int64_t>(b.at("gpu_id"), "gpu_id"),
                         json_integer<int64_t>(b.at("kernel_id"), "kernel_id"),
                         b.at("shape").get<std::string>(),
                         dtype_from_string(b.at("dtype").get<std::string>()), b.value("layout", ""),
                         json_integer<int64_t>(b.at("measurement_id"), "measurement_id")});
    }
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("{}: malformed ktune export: {}", in_path.string(), e.what()));
  }
  tx.commit();
  return importer.stats();
}

}  // namespace ktune::cache
