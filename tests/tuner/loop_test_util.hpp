#pragma once
// Fakes for the tuning loop's tests: a compile function that returns a plausible CompileResult
// without NVRTC, and a measurer that "times" each candidate with a value derived from its name
// (some configs fail verification), counting what it was asked to measure.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "cache/config_cache.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"
#include "measure/candidate.hpp"
#include "tuner/loop/candidate_measurer.hpp"

namespace ktune::tuner::test {

/// FNV-1a of a name: a stable pseudo-random number per config.
inline uint64_t name_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

/// The fake kernel time of a config: 10 .. 30 us, fixed per name.
inline double fake_time_us(const std::string& name) {
  return 10.0 + static_cast<double>(name_hash(name) % 2000) / 100.0;
}

/// Whether the fake says a config computes a wrong answer (about one in seven).
inline bool fake_incorrect(const std::string& name) { return name_hash(name) % 7 == 3; }

/// A compile function: every name expression gets a lowered name and `registers` registers; the
/// expressions containing `fail_marker` (when not empty) fail to compile.
inline std::function<harness::CompileResult(const harness::CompileRequest&)> fake_compile(
    int registers = 64, std::string fail_marker = {}, std::atomic<int>* calls = nullptr) {
  return [registers, fail_marker, calls](const harness::CompileRequest& r) {
    if (calls != nullptr) ++*calls;
    harness::CompileResult out;
    out.cubin =
        "\x7f"
        "ELF fake cubin";
    for (const auto& e : r.name_expressions) {
      if (!fail_marker.empty() && e.find(fail_marker) != std::string::npos) {
        throw Error(ErrorKind::kRuntime, "NVRTC compile failed", "NVRTC_ERROR_COMPILATION", "",
                    "fake.cu(1): error: something " + e);
      }
      const std::string lowered = "_Z_fake_" + std::to_string(name_hash(e));
      out.lowered_names[e] = lowered;
      out.resources[lowered] = harness::KernelResources{registers, 0, 0, 0, 0, 0};
    }
    out.compile_ms = 1;
    return out;
  };
}

/// A measurer that returns fake results and records every name it measured.
class FakeMeasurer : public CandidateMeasurer {
 public:
  /// Called before each measure() with the number of calls so far (0-based): lets a test die there.
  std::function<void(int)> before_measure;

  measure::CandidateResult measure(const measure::CandidateRequest& request) override {
    std::lock_guard lock(mutex_);
    if (before_measure) before_measure(calls_);
    ++calls_;
    measured.push_back(request.name);
    launches_of[request.name] = request.launches.size();
    return result(request, 1.0);
  }
  std::vector<measure::CandidateResult> retime(std::vector<measure::CandidateRequest> requests,
                                               int) override {
    std::lock_guard lock(mutex_);
    std::vector<measure::CandidateResult> out;
    for (const auto& r : requests) {
      retimed.push_back(r.name);
      out.push_back(result(r, 1.001));  // a re-time sees every candidate 0.1 % slower, alike
    }
    return out;
  }
  int calls() const { return calls_; }

  std::vector<std::string> measured;
  std::vector<std::string> retimed;
  std::map<std::string, size_t> launches_of;  ///< launches of each measured request, by name

 private:
  static measure::CandidateResult result(const measure::CandidateRequest& request, double factor) {
    measure::CandidateResult r;
    r.id = request.id;
    r.name = request.name;
    if (fake_incorrect(request.name)) {
      r.outcome = ktune::Outcome::kIncorrect;
      r.reason = "rel_err 0.5 > tolerance 0.02";
      return r;
    }
    r.outcome = ktune::Outcome::kOk;
    measure::SampleStats s;
    s.median = fake_time_us(request.name) * factor;
    s.min = s.median * 0.99;
    s.mean = s.median;
    s.p90 = s.median * 1.01;
    s.samples = 20;
    r.stats = s;
    return r;
  }

  std::mutex mutex_;
  int calls_ = 0;
};

/// A folder removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ktune_loop_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// Every stored measurement of the database, in id order.
inline std::vector<cache::StoredMeasurement> all_measurements(const cache::ConfigCache& db) {
  std::vector<cache::StoredMeasurement> out;
  db.for_each_measurement({}, [&](const cache::StoredMeasurement& m) { out.push_back(m); });
  return out;
}

}  // namespace ktune::tuner::test
