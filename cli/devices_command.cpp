/// `ktune devices`: every CUDA device of this machine with the properties that make up the GPU
/// key (name, compute capability, SM count, memory) and the limits tuning cares about; with
/// `--calibrate`, each device's measured ceilings too, stored with the GPU in the database.

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/calibrate.hpp"
#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "cli/output.hpp"
#include "harness/device_info.hpp"
#include "harness/nvrtc_api.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;

void print_device(std::ostream& out, const harness::DeviceInfo& d) {
  out << fmt::format("GPU {}: {} ({}, {} SMs, {:.1f} GiB)\n", d.ordinal, d.name, d.arch(), d.sm_count,
                     static_cast<double>(d.memory_bytes) / kGiB);
  auto row = [&out](const char* key, const std::string& value) {
    out << fmt::format("  {:<28} {}\n", key, value);
  };
  row("uuid", d.uuid);
  row("pci bus id", d.pci_bus_id);
  row("compute capability", fmt::format("{}.{}", d.cc_major, d.cc_minor));
  row("multiprocessors", std::to_string(d.sm_count));
  row("memory",
      fmt::format("{} bytes ({:.1f} GiB)", d.memory_bytes, static_cast<double>(d.memory_bytes) / kGiB));
  row("L2 cache", fmt::format("{} bytes ({:.1f} MiB)", d.l2_bytes, static_cast<double>(d.l2_bytes) / kMiB));
  row("shared memory / block opt-in", fmt::format("{} bytes", d.smem_per_block_optin));
  row("shared memory / SM", fmt::format("{} bytes", d.smem_per_sm));
  row("max threads / block", std::to_string(d.max_threads_per_block));
  row("max registers / block", std::to_string(d.max_regs_per_block));
  row("registers / SM", std::to_string(d.regs_per_sm));
  row("warp size", std::to_string(d.warp_size));
  row("SM clock", fmt::format("{} MHz", d.sm_clock_khz / 1000));
  row("memory clock", fmt::format("{} MHz", d.mem_clock_khz / 1000));
  row("memory bus width", fmt::format("{} bits", d.mem_bus_width_bits));
  row("driver (CUDA version)",
      fmt::format("{} ({}.{})", d.driver_version, d.driver_version / 1000, (d.driver_version % 1000) / 10));
}

/// The CUDA toolkit version NVRTC reports ("13.0"); empty when NVRTC cannot be opened, which
/// does not stop `devices` (only compiling needs it).
std::string nvrtc_version() {
  try {
    const auto& api = harness::nvrtc();
    return fmt::format("{}.{}", api.version_major, api.version_minor);
  } catch (const Error&) {
    return {};
  }
}

struct DevicesOptions {
  bool json = false;
  bool calibrate = false;
  std::string db;
};

void print_ceilings(std::ostream& out, const nlohmann::json& c) {
  auto row = [&out](const char* key, const std::string& value) {
    out << fmt::format("  {:<28} {}\n", key, value);
  };
  if (c.contains("copy_gbps"))
    row("copy bandwidth (measured)", fmt::format("{:.1f} GB/s", c["copy_gbps"].get<double>()));
  if (c.contains("bf16_tflops"))
    row("bf16 GEMM (cuBLASLt)", fmt::format("{:.1f} TFLOP/s", c["bf16_tflops"].get<double>()));
  if (c.contains("f16_tflops"))
    row("f16 GEMM (cuBLASLt)", fmt::format("{:.1f} TFLOP/s", c["f16_tflops"].get<double>()));
  if (c.contains("unavailable")) {
    for (const auto& [key, why] : c["unavailable"].items()) row(("no " + key).c_str(), why.dump());
  }
  if (c.contains("db")) row("ceilings stored in", c["db"].get<std::string>());
}

void run_devices(const DevicesOptions& o) {
  int count = 0;
  try {
    count = harness::device_count();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNoDevice) throw;
    throw Error(ErrorKind::kNoDevice, std::string("no CUDA device available: ") + e.what(), e.api_code(),
                e.where(), e.detail());
  }
  if (count <= 0)
    throw Error(ErrorKind::kNoDevice, "no CUDA device found: the driver sees no GPU on this machine");
  std::vector<harness::DeviceInfo> devices;
  for (int i = 0; i < count; ++i) devices.push_back(harness::query_device(i));

  std::vector<nlohmann::json> ceilings;
  if (o.calibrate) {
    for (const auto& d : devices) ceilings.push_back(calibrate_device(d.ordinal, o.db));
  }

  const std::string nvrtc = nvrtc_version();
  if (o.json) {
    nlohmann::json doc;
    doc["count"] = count;
    doc["nvrtc_version"] = nvrtc.empty() ? nlohmann::json(nullptr) : nlohmann::json(nvrtc);
    doc["devices"] = nlohmann::json::array();
    for (size_t i = 0; i < devices.size(); ++i) {
      auto dev = harness::to_json(devices[i]);
      if (o.calibrate) dev["ceilings"] = ceilings[i];
      doc["devices"].push_back(std::move(dev));
    }
    print_json(doc);
    return;
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    print_device(std::cout, devices[i]);
    if (o.calibrate) print_ceilings(std::cout, ceilings[i]);
  }
  std::cout << "NVRTC (CUDA toolkit) " << (nvrtc.empty() ? std::string("not found") : nvrtc) << "\n";
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto opts = std::make_shared<DevicesOptions>();
  auto* cmd = app.add_subcommand(
      "devices",
      "List this machine's CUDA devices: name, compute capability, SMs, memory, L2, limits, clocks, driver");
  auto* calibrate =
      cmd->add_flag("--calibrate", opts->calibrate,
                    "Also measure each device's ceilings (copy bandwidth, cuBLASLt bf16/f16 GEMM rate) "
                    "and store them with the GPU in the database, e.g. --calibrate --db ./ktune.db");
  add_db_option(*cmd, opts->db);
  cmd->get_option("--db")->needs(calibrate);
  add_json_flag(*cmd, opts->json);
  cmd->footer(
      "Examples:\n"
      "  ktune devices\n"
      "  ktune devices --json | jq '.devices[0].name'\n"
      "  ktune devices --calibrate --json | jq '.devices[0].ceilings'\n"
      "Exit codes: 0 ok, 1 a measurement or the database failed, 3 no driver or no GPU (the message "
      "says which).");
  cmd->callback([opts] { run_devices(*opts); });
}

}  // namespace ktune::cli
