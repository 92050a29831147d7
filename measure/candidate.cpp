#include "measure/candidate.hpp"

#include <array>
#include <limits>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/json_integer.hpp"
#include "ktune/error.hpp"

namespace ktune::measure {

using nlohmann::json;

namespace {

json binary_of(const std::string& bytes) {
  return json::binary(json::binary_t::container_type(bytes.begin(), bytes.end()));
}

std::string bytes_of(const json& j) {
  const auto& b = j.get_binary();
  return {b.begin(), b.end()};
}

template <typename F>
auto parse_or_throw(std::string_view what, F&& fn) {
  try {
    return fn();
  } catch (const json::exception& e) {
    throw Error(ErrorKind::kBadInput, fmt::format("malformed {}: {}", what, e.what()));
  }
}

/// `j` as N integers of type T (a JSON array of exactly N).
template <typename T, std::size_t N>
std::array<T, N> integers(const json& j, std::string_view what) {
  if (!j.is_array() || j.size() != N)
    throw Error(ErrorKind::kBadInput,
                fmt::format("\"{}\" must be an array of {} integers, not {}", what, N, j.dump()));
  std::array<T, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = json_integer<T>(j[i], what);
  return out;
}

std::string_view init_name(BufferSpec::Init init) {
  return init == BufferSpec::Init::kFill ? "fill" : "poison";
}

BufferSpec::Init init_from(const std::string& s) {
  if (s == "fill") return BufferSpec::Init::kFill;
  if (s == "poison") return BufferSpec::Init::kPoison;
  throw Error(ErrorKind::kBadInput, fmt::format("unknown buffer init '{}'", s));
}

constexpr std::array<std::string_view, 5> kFillKinds{"random", "range", "pattern", "sequence", "file"};

json to_json(const BufferFill& f) {
  json j{{"kind", kFillKinds[static_cast<std::size_t>(f.kind)]}};
  switch (f.kind) {
    case BufferFill::Kind::kRandom:
      j["scale"] = f.scale;
      break;
    case BufferFill::Kind::kRange:
      j["min"] = f.min;
      j["max"] = f.max;
      break;
    case BufferFill::Kind::kPattern:
      j["pattern"] = f.pattern;
      break;
    case BufferFill::Kind::kSequence:
      j["start"] = f.start;
      j["step"] = f.step;
      if (f.modulo) j["modulo"] = *f.modulo;
      break;
    case BufferFill::Kind::kFile:
      j["path"] = f.path;
      break;
  }
  return j;
}

BufferFill fill_from_json(const json& j) {
  const std::string kind = j.at("kind").get<std::string>();
  if (kind == "random") return BufferFill::random(j.at("scale").get<double>());
  if (kind == "range") return BufferFill::range(j.at("min").get<double>(), j.at("max").get<double>());
  if (kind == "pattern") return BufferFill::repeat(j.at("pattern").get<std::vector<double>>());
  if (kind == "sequence") {
    std::optional<int64_t> modulo;
    if (j.contains("modulo")) modulo = json_integer<int64_t>(j.at("modulo"), "modulo");
    return BufferFill::sequence(json_integer<int64_t>(j.at("start"), "start"),
                                json_integer<int64_t>(j.at("step"), "step"), modulo);
  }
  if (kind == "file") return BufferFill::file(j.at("path").get<std::string>());
  throw Error(ErrorKind::kBadInput, fmt::format("unknown buffer fill '{}'", kind));
}

constexpr std::array<std::string_view, 8> kArgKinds{"buffer", "i32", "u32", "i64",
                                                    "u64",    "f32", "f64", "tensor_map"};

// The cubins go into `attachment` (raw bytes after the CBOR body, see worker_protocol.hpp) when
// one is given: CBOR byte strings are decoded byte by byte (~140 MB/s), the attachment is a slice.
// A cubin several launches share (a split-K GEMM and its reduction) is appended once.
class CubinSink {
 public:
  explicit CubinSink(std::string* attachment) : attachment_(attachment) {}

  json put(const std::string& cubin) {
    if (!attachment_) return binary_of(cubin);
    for (const auto& [offset, bytes] : placed_) {
      if (bytes == cubin.size() && attachment_->compare(offset, bytes, cubin) == 0)
        return slice(offset, bytes);
    }
    const std::size_t offset = attachment_->size();
    attachment_->append(cubin);
    placed_.emplace_back(offset, cubin.size());
    return slice(offset, cubin.size());
  }

 private:
  static json slice(std::size_t offset, std::size_t bytes) { return {{"offset", offset}, {"bytes", bytes}}; }
  std::string* attachment_;
  std::vector<std::pair<std::size_t, std::size_t>> placed_;
};

std::string cubin_from_json(const json& j, const std::string* attachment) {
  if (j.is_binary()) return bytes_of(j);
  const auto offset = json_integer<std::size_t>(j.at("offset"), "offset");
  const auto bytes = json_integer<std::size_t>(j.at("bytes"), "bytes");
  if (!attachment || offset > attachment->size() || bytes > attachment->size() - offset) {
    throw Error(ErrorKind::kBadInput, fmt::format("cubin slice [{}, +{}) lies outside the {}-byte attachment",
                                                  offset, bytes, attachment ? attachment->size() : 0));
  }
  return attachment->substr(offset, bytes);
}

json to_json(const LaunchSpec& l, CubinSink& cubins) {
  json args = json::array();
  for (const KernelArg& a : l.args) {
    json ja{{"kind", kArgKinds[static_cast<std::size_t>(a.kind)]}};
    if (a.kind == KernelArg::Kind::kBuffer) {
      ja["buffer"] = a.buffer;
    } else if (a.kind == KernelArg::Kind::kTensorMap) {
      ja["buffer"] = a.buffer;
      ja["map"] = a.map;
      ja["dtype"] = std::string(to_string(a.map_dtype));
    } else if (a.kind == KernelArg::Kind::kF32 || a.kind == KernelArg::Kind::kF64) {
      ja["f"] = a.f;
    } else {
      ja["i"] = a.i;
    }
    args.push_back(std::move(ja));
  }
  json out{{"cubin", cubins.put(l.cubin)},   {"function", l.function}, {"grid", l.grid}, {"block", l.block},
           {"shared_bytes", l.shared_bytes}, {"args", std::move(args)}};
  if (!l.library.is_null()) out["library"] = l.library;
  return out;
}

LaunchSpec launch_from_json(const json& j, const std::string* attachment) {
  LaunchSpec l;
  l.cubin = cubin_from_json(j.at("cubin"), attachment);
  l.function = j.at("function").get<std::string>();
  l.grid = integers<uint32_t, 3>(j.at("grid"), "grid");
  l.block = integers<uint32_t, 3>(j.at("block"), "block");
  l.shared_bytes = json_integer<uint32_t>(j.at("shared_bytes"), "shared_bytes");
  if (const auto lib = j.find("library"); lib != j.end() && !lib->is_null()) {
    if (!lib->is_object()) throw Error(ErrorKind::kBadInput, "a launch's library call must be an object");
    l.library = *lib;
  }
  for (const json& ja : j.at("args")) {
    KernelArg a;
    const auto kind = ja.at("kind").get<std::string>();
    std::size_t k = 0;
    while (k < kArgKinds.size() && kArgKinds[k] != kind) ++k;
    if (k == kArgKinds.size())
      throw Error(ErrorKind::kBadInput, fmt::format("unknown kernel argument kind '{}'", kind));
    a.kind = static_cast<KernelArg::Kind>(k);
    if (a.kind == KernelArg::Kind::kBuffer) {
      a.buffer = ja.at("buffer").get<std::string>();
    } else if (a.kind == KernelArg::Kind::kTensorMap) {
      a.buffer = ja.at("buffer").get<std::string>();
      a.map = integers<int64_t, 4>(ja.at("map"), "map");
      a.map_dtype = dtype_from_string(ja.at("dtype").get<std::string>());
    } else if (a.kind == KernelArg::Kind::kF32 || a.kind == KernelArg::Kind::kF64) {
      a.f = ja.at("f").get<double>();
    } else {
      a.i = json_integer<int64_t>(ja.at("i"), "i");
    }
    l.args.push_back(std::move(a));
  }
  return l;
}

template <typename T>
void put_opt(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <typename T>
std::optional<T> get_opt(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

}  // namespace

json to_json(const SampleStats& s) {
  return {{"median_us", s.median},
          {"min_us", s.min},
          {"max_us", s.max},
          {"mean_us", s.mean},
          {"p90_us", s.p90},
          {"stdev_us", s.stdev},
          {"rse_median", std::isfinite(s.rse_median) ? json(s.rse_median) : json(nullptr)},
          {"samples", s.samples}};
}

SampleStats sample_stats_from_json(const json& j) {
  return parse_or_throw("statistics", [&] {
    SampleStats s;
    s.median = j.at("median_us").get<double>();
    s.min = j.at("min_us").get<double>();
    s.max = j.at("max_us").get<double>();
    s.mean = j.at("mean_us").get<double>();
    s.p90 = j.at("p90_us").get<double>();
    s.stdev = j.at("stdev_us").get<double>();
    s.rse_median = j.at("rse_median").is_null() ? std::numeric_limits<double>::infinity()
                                                : j.at("rse_median").get<double>();
    s.samples = json_integer<std::size_t>(j.at("samples"), "samples");
    return s;
  });
}

json to_json(const TimingOptions& t) {
  return {{"warmup_min_launches", t.warmup_min_launches},
          {"warmup_min_ms", t.warmup_min_ms},
          {"flush", to_string(t.flush)},
          {"l2_flush_factor", t.l2_flush_factor},
          {"rotate_max_sets", t.rotate_max_sets},
          {"graph_batch_threshold_us", t.graph_batch_threshold_us},
          {"graph_batch_target_us", t.graph_batch_target_us},
          {"graph_batch_max_launches", t.graph_batch_max_launches},
          {"rse_target", t.rse_target},
          {"min_samples", t.min_samples},
          {"max_samples", t.max_samples},
          {"max_time_ms", t.max_time_ms},
          {"retime_top_k", t.retime_top_k},
          {"candidate_timeout_ms", t.candidate_timeout_ms},
          {"counters", t.counters},
          {"metrics", t.metrics},
          {"activity_timer", t.activity_timer},
          {"seed", t.seed}};
}

TimingOptions timing_options_from_json(const json& j) {
  return parse_or_throw("timing options", [&] {
    TimingOptions t;
    t.warmup_min_launches = json_integer<int>(j.at("warmup_min_launches"), "warmup_min_launches");
    t.warmup_min_ms = j.at("warmup_min_ms").get<double>();
    t.flush = flush_mode_from_string(j.at("flush").get<std::string>());
    t.l2_flush_factor = j.at("l2_flush_factor").get<double>();
    t.rotate_max_sets = json_integer<int>(j.at("rotate_max_sets"), "rotate_max_sets");
    t.graph_batch_threshold_us = j.at("graph_batch_threshold_us").get<double>();
    t.graph_batch_target_us = j.at("graph_batch_target_us").get<double>();
    t.graph_batch_max_launches =
        json_integer<int>(j.at("graph_batch_max_launches"), "graph_batch_max_launches");
    t.rse_target = j.at("rse_target").get<double>();
    t.min_samples = json_integer<int>(j.at("min_samples"), "min_samples");
    t.max_samples = json_integer<int>(j.at("max_samples"), "max_samples");
    t.max_time_ms = j.at("max_time_ms").get<double>();
    t.retime_top_k = json_integer<int>(j.at("retime_top_k"), "retime_top_k");
    t.candidate_timeout_ms = j.at("candidate_timeout_ms").get<double>();
    t.counters = j.at("counters").get<bool>();
    t.metrics = j.at("metrics").get<std::vector<std::string>>();
    t.activity_timer = j.at("activity_timer").get<bool>();
    t.seed = json_integer<uint64_t>(j.at("seed"), "seed");
    return t;
  });
}

json to_json(const CandidateRequest& r) { return to_json(r, nullptr); }

json to_json(const CandidateRequest& r, std::string* attachment) {
  json buffers = json::array();
  for (const BufferSpec& b : r.buffers) {
    json jb{{"name", b.name},
            {"dtype", to_string(b.dtype)},
            {"count", b.count},
            {"init", init_name(b.init)},
            {"fill", to_json(b.fill)}};
    if (b.integer) jb["integer"] = to_string(*b.integer);
    buffers.push_back(std::move(jb));
  }
  json checks = json::array();
  for (const OutputCheck& c : r.checks) {
    json check = {{"output", c.output}, {"reference", c.reference}};
    if (c.rel_l2 > 0) check["rel_l2"] = c.rel_l2;
    if (c.abs) check["abs"] = *c.abs;
    checks.push_back(std::move(check));
  }
  CubinSink cubins(attachment);
  json launches = json::array();
  for (const LaunchSpec& l : r.launches) launches.push_back(to_json(l, cubins));
  json j{{"id", r.id},
         {"name", r.name},
         {"device", r.device},
         {"buffers", std::move(buffers)},
         {"launches", std::move(launches)},
         {"main_launch", r.main_launch},
         {"checks", std::move(checks)},
         {"timing", to_json(r.timing)},
         {"bytes_moved", r.bytes_moved},
         {"flops", r.flops}};
  if (r.reference) j["reference"] = to_json(*r.reference, cubins);
  return j;
}

CandidateRequest candidate_request_from_json(const json& j) {
  return candidate_request_from_json(j, nullptr);
}

CandidateRequest candidate_request_from_json(const json& j, const std::string* attachment) {
  return parse_or_throw("candidate request", [&] {
    CandidateRequest r;
    r.id = json_integer<uint64_t>(j.at("id"), "id");
    r.name = j.at("name").get<std::string>();
    r.device = json_integer<int>(j.at("device"), "device");
    for (const json& jb : j.at("buffers")) {
      BufferSpec b;
      b.name = jb.at("name").get<std::string>();
      b.dtype = dtype_from_string(jb.at("dtype").get<std::string>());
      b.count = json_integer<uint64_t>(jb.at("count"), "count");
      b.init = init_from(jb.at("init").get<std::string>());
      b.fill = fill_from_json(jb.at("fill"));
      if (jb.contains("integer")) {
        const std::string name = jb.at("integer").get<std::string>();
        b.integer = int_type_from_string(name);
        if (!b.integer) throw Error(ErrorKind::kBadInput, fmt::format("unknown integer type '{}'", name));
      }
      r.buffers.push_back(std::move(b));
    }
    for (const json& jl : j.at("launches")) r.launches.push_back(launch_from_json(jl, attachment));
    if (r.launches.empty()) throw Error(ErrorKind::kBadInput, "candidate request has no launches");
    r.main_launch = json_integer<uint32_t>(j.at("main_launch"), "main_launch");
    if (r.main_launch >= r.launches.size()) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("candidate request's main_launch {} is not one of its {} launches",
                              r.main_launch, r.launches.size()));
    }
    if (j.contains("reference")) r.reference = launch_from_json(j.at("reference"), attachment);
    for (const json& jc : j.at("checks")) {
      OutputCheck check{jc.at("output").get<std::string>(), jc.at("reference").get<std::string>(),
                        jc.value("rel_l2", 0.0)};
      if (jc.contains("abs")) check.abs = jc.at("abs").get<double>();
      r.checks.push_back(std::move(check));
    }
    r.timing = timing_options_from_json(j.at("timing"));
    r.bytes_moved = j.at("bytes_moved").get<double>();
    r.flops = j.at("flops").get<double>();
    return r;
  });
}

json to_json(const CandidateResult& r) {
  json j{{"id", r.id},
         {"name", r.name},
         {"outcome", to_string(r.outcome)},
         {"reason", r.reason},
         {"samples_us", r.samples_us},
         {"stop_reason", r.stop_reason},
         {"drift", r.drift},
         {"launches_per_sample", r.launches_per_sample},
         {"flush", r.flush},
         {"rel_err", r.rel_err},
         {"max_abs_err", r.max_abs_err},
         {"counters", r.counters},
         {"resources", r.resources},
         {"gbps", r.gbps},
         {"tflops", r.tflops},
         {"wall_ms", r.wall_ms},
         {"worker_pid", r.worker_pid}};
  if (r.stats) j["stats"] = to_json(*r.stats);
  put_opt(j, "sm_clock_mhz", r.sm_clock_mhz);
  put_opt(j, "temperature_c", r.temperature_c);
  put_opt(j, "activity_median_us", r.activity_median_us);
  return j;
}

CandidateResult candidate_result_from_json(const json& j) {
  return parse_or_throw("candidate result", [&] {
    CandidateResult r;
    r.id = json_integer<uint64_t>(j.at("id"), "id");
    r.name = j.at("name").get<std::string>();
    r.outcome = outcome_from_string(j.at("outcome").get<std::string>());
    r.reason = j.at("reason").get<std::string>();
    if (j.contains("stats")) r.stats = sample_stats_from_json(j.at("stats"));
    r.samples_us = j.at("samples_us").get<std::vector<double>>();
    r.stop_reason = j.at("stop_reason").get<std::string>();
    r.drift = j.at("drift").get<double>();
    r.launches_per_sample = json_integer<int>(j.at("launches_per_sample"), "launches_per_sample");
    r.flush = j.at("flush").get<std::string>();
    r.rel_err = j.at("rel_err").get<double>();
    r.max_abs_err = j.at("max_abs_err").get<double>();
    r.counters = j.at("counters");
    r.resources = j.at("resources");
    r.gbps = j.at("gbps").get<double>();
    r.tflops = j.at("tflops").get<double>();
    r.wall_ms = j.at("wall_ms").get<double>();
    r.worker_pid = json_integer<int>(j.at("worker_pid"), "worker_pid");
    r.sm_clock_mhz = get_opt<double>(j, "sm_clock_mhz");
    r.temperature_c = get_opt<double>(j, "temperature_c");
    r.activity_median_us = get_opt<double>(j, "activity_median_us");
    return r;
  });
}

}  // namespace ktune::measure
