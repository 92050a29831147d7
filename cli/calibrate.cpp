#include "cli/calibrate.hpp"

#include <iostream>

#include <fmt/format.h>

#include "cli/db_option.hpp"
#include "harness/device_info.hpp"
#include "measure/candidate_runner.hpp"
#include "measure/ceilings.hpp"

namespace ktune::cli {

nlohmann::json calibrate_device(int ordinal, const std::string& db_flag) {
  const harness::DeviceInfo dev = harness::query_device(ordinal);
  std::cerr << fmt::format("calibrating GPU {} ({}): copy bandwidth, cuBLASLt bf16/f16 GEMM...\n", ordinal,
                           dev.name);
  measure::RunnerOptions ro;
  ro.worker_command = measure::default_worker_command();
  ro.worker_command.insert(ro.worker_command.end(), {"--device", std::to_string(ordinal)});
  measure::CandidateRunner runner(ro);
  nlohmann::json ceilings = measure::measure_ceilings(ordinal, runner);
  runner.shutdown();

  cache::GpuInfo gpu;
  gpu.name = dev.name;
  gpu.cc_major = dev.cc_major;
  gpu.cc_minor = dev.cc_minor;
  gpu.sm_count = dev.sm_count;
  gpu.memory_bytes = dev.memory_bytes;
  nlohmann::json stored = ceilings;
  stored.erase("unavailable");
  gpu.ceilings_json = stored.dump();
  const auto path = db_path(db_flag);
  cache::ConfigCache db = open_for_writing(path);
  db.upsert_gpu(gpu);
  ceilings["db"] = path.string();
  return ceilings;
}

}  // namespace ktune::cli
