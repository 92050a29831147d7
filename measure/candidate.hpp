#pragma once
/// What the parent asks a worker to measure, and what comes back. A candidate is described as
/// data (buffers, a sequence of launches each with its compiled cubin, lowered kernel name, launch
/// geometry and arguments, an optional GPU reference kernel, output checks), so the worker needs no
/// knowledge of kernels: the tuner, `ktune bench` and the tests all build a CandidateRequest and
/// call CandidateRunner.
///
/// A candidate is the whole sequence a caller pays for on every call: a split-K GEMM is the GEMM
/// and its reduction; the atomic variant also zeroes its workspace first (a launch of its own).
/// The sequence is verified after a whole run, timed as one sample (events around all of it; a
/// CUDA-graph batch captures N whole sequences), and profiled as one CUPTI pass.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/buffer_fill.hpp"
#include "core/dtype.hpp"
#include "core/int_type.hpp"
#include "core/outcome.hpp"
#include "measure/statistics.hpp"
#include "measure/timing_options.hpp"

namespace ktune::measure {

/// A device buffer the worker allocates for a candidate.
struct BufferSpec {
  enum class Init {
    kFill,    ///< values as `fill` says (core/buffer_fill.hpp; by default counter-based random values,
              ///< magnitude in [0.25, 1) * scale, random sign): never all zeros
    kPoison,  ///< every byte 0xFF (NaN in every float dtype, -1 in a signed integer), written before
              ///< each verified run; an integer reference output gets 0xFE bytes instead, so an
              ///< element neither side wrote differs
  };
  std::string name;
  DType dtype = DType::kF32;
  uint64_t count = 0;  ///< elements
  Init init = Init::kFill;
  BufferFill fill;  ///< kFill
  /// Set: the buffer holds integers of this type and `dtype` is unused (a user kernel's index tensor).
  std::optional<IntType> integer;

  uint64_t bytes() const { return count * (integer ? size_of(*integer) : size_of(dtype)); }
  /// "f32", "i32", ...
  std::string_view type_name() const { return integer ? to_string(*integer) : to_string(dtype); }
};

/// One kernel argument: a buffer's device pointer, a scalar, or the 128-byte TMA tensor map of a
/// buffer (harness/tensor_map.hpp: encoded when the arguments are bound to a buffer set).
struct KernelArg {
  enum class Kind { kBuffer, kI32, kU32, kI64, kU64, kF32, kF64, kTensorMap };
  Kind kind = Kind::kBuffer;
  std::string buffer;  ///< for kBuffer and kTensorMap
  int64_t i = 0;       ///< for the integer kinds
  double f = 0;        ///< for kF32 / kF64
  /// kTensorMap: the buffer as a row-major [rows, cols] tensor of `map_dtype` read in
  /// box_rows x box_cols boxes: {rows, cols, box_rows, box_cols}.
  std::array<int64_t, 4> map{};
  DType map_dtype = DType::kBF16;

  static KernelArg buf(std::string name) { return {Kind::kBuffer, std::move(name), 0, 0}; }
  static KernelArg i32(int32_t v) { return {Kind::kI32, {}, v, 0}; }
  static KernelArg u32(uint32_t v) { return {Kind::kU32, {}, v, 0}; }
  static KernelArg i64(int64_t v) { return {Kind::kI64, {}, v, 0}; }
  static KernelArg u64(uint64_t v) { return {Kind::kU64, {}, static_cast<int64_t>(v), 0}; }
  static KernelArg f32(float v) { return {Kind::kF32, {}, 0, v}; }
  static KernelArg f64(double v) { return {Kind::kF64, {}, 0, v}; }
  static KernelArg tensor_map(std::string name, DType dtype, int64_t rows, int64_t cols, int64_t box_rows,
                              int64_t box_cols) {
    KernelArg a{Kind::kTensorMap, std::move(name), 0, 0};
    a.map = {rows, cols, box_rows, box_cols};
    a.map_dtype = dtype;
    return a;
  }
};

/// A compiled kernel and how to launch it. Launches of one sequence usually share one cubin: it
/// travels (and is loaded) once.
struct LaunchSpec {
  std::string cubin;     ///< CUBIN bytes from NVRTC
  std::string function;  ///< lowered (mangled) name, from CompileResult::lowered_names
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_bytes = 0;  ///< dynamic shared memory; > 48 KiB is opted in with cuFuncSetAttribute
  std::vector<KernelArg> args;
  /// Non-null: a vendor-library call (measure/library_call.hpp) instead of a kernel: no cubin, and
  /// `function` only labels it. A library call is a candidate's only launch.
  nlohmann::json library;
};

/// Compare buffer `output` (written by the candidate) with `reference` (written by the reference
/// kernel, or an input for kernels whose answer is an input, e.g. copy).
struct OutputCheck {
  std::string output;
  std::string reference;
  /// > 0: replaces the output dtype's relative L2 bound (tolerance.hpp), and its max-abs bound
  /// becomes at least 10x this (a user kernel's per-output tolerance, docs/byo.md); 0: the dtype's.
  double rel_l2 = 0;
  /// Set: a bound on max_i |out_i - ref_i|. Alone (rel_l2 0) it is the whole criterion; beside
  /// rel_l2, meeting either passes. An integer output is judged by this alone, 0 (exact) when unset.
  std::optional<double> abs;
};

/// One candidate for a worker.
struct CandidateRequest {
  uint64_t id = 0;
  std::string name;  ///< canonical config name (log key, report row)
  int device = 0;
  std::vector<BufferSpec> buffers;
  /// The candidate: launched in this order on one stream for every run; never empty.
  std::vector<LaunchSpec> launches;
  /// The launch whose resources the result reports at the top level of `resources` (a split-K
  /// plan's GEMM, not its zeroing or reduction); every launch's are under resources["launches"].
  uint32_t main_launch = 0;
  std::optional<LaunchSpec> reference;  ///< run once, before the candidate, on the same inputs
  std::vector<OutputCheck> checks;      ///< empty: the candidate is timed unverified (bench --no-verify)
  TimingOptions timing;
  double bytes_moved = 0;  ///< per run of the whole sequence, for GB/s (0: not reported)
  double flops = 0;        ///< per run of the whole sequence, for TFLOP/s (0: not reported)
};

/// What came back for one candidate.
struct CandidateResult {
  uint64_t id = 0;
  std::string name;
  Outcome outcome = Outcome::kSkipped;
  std::string reason;                ///< "" for ok
  std::optional<SampleStats> stats;  ///< microseconds per run of the whole sequence; present when timed
  std::vector<double> samples_us;    ///< per-run sample values, arrival order
  std::string stop_reason;           ///< StopReason name ("converged", "sample_cap", "time_cap")
  double drift = 0;                  ///< StoppingRule::drift() at the end
  int launches_per_sample = 1;       ///< runs of the whole sequence per sample: > 1 in CUDA-graph batches
  std::string flush;                 ///< flush mode used
  double rel_err = -1;               ///< verification (-1: not verified)
  double max_abs_err = -1;
  nlohmann::json counters = nlohmann::json::object();   ///< {"available":..,"reason":..,"metrics":{..}}
  nlohmann::json resources = nlohmann::json::object();  ///< registers, shared/local bytes, ...
  std::optional<double> sm_clock_mhz;                   ///< NVML, absent when unknown
  std::optional<double> temperature_c;                  ///< NVML, absent when unknown
  std::optional<double>
      activity_median_us;  ///< CUPTI Activity median of a run (its kernels' sum), when asked for
  double gbps = 0;         ///< bytes_moved / median (0 when not reported)
  double tflops = 0;       ///< flops / median
  double wall_ms = 0;      ///< parent-side wall time of this candidate (queueing, load, verify, time)
  int worker_pid = 0;
  /// Parent side only (not sent): the run was cut short by a stop request (RunnerOptions::stop);
  /// the result says nothing about the candidate and is not stored.
  bool interrupted = false;
};

nlohmann::json to_json(const SampleStats& s);
SampleStats sample_stats_from_json(const nlohmann::json& j);
/// Request and result as JSON; each cubin travels as a JSON binary value (CBOR byte string).
nlohmann::json to_json(const CandidateRequest& r);
nlohmann::json to_json(const CandidateResult& r);
nlohmann::json to_json(const TimingOptions& t);
/// The request with its cubins appended to `attachment` instead (the wire form: see
/// worker_protocol.hpp); the JSON then holds {"offset","bytes"} slices of the attachment. A cubin
/// that several launches share is appended once and sliced by each.
nlohmann::json to_json(const CandidateRequest& r, std::string* attachment);
/// Inverses; throw ktune::Error(kBadInput) naming the missing or mistyped field.
CandidateRequest candidate_request_from_json(const nlohmann::json& j);
/// Inverse of the attachment form.
CandidateRequest candidate_request_from_json(const nlohmann::json& j, const std::string* attachment);
CandidateResult candidate_result_from_json(const nlohmann::json& j);
TimingOptions timing_options_from_json(const nlohmann::json& j);

}  // namespace ktune::measure
