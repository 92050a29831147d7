#include "cli/gpu_choice.hpp"

#include <fmt/format.h>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {

std::string choose_gpu(const cache::ConfigCache& db, const std::string& gpu, int device) {
  if (!gpu.empty()) return gpu;
  if (device >= 0) {
    const int count = harness::device_count();
    if (device >= count) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("--device {}: this machine has {} CUDA device(s)", device, count));
    }
    return harness::query_device(device).name;
  }
  try {
    if (harness::device_count() > 0) return harness::query_device(0).name;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kNoDevice) throw;
  }
  const auto gpus = db.gpu_names();
  if (gpus.size() == 1) return gpus.front();
  if (gpus.empty())
    throw Error(ErrorKind::kNotFound, "the database " + db.path().string() + " holds no GPU yet");
  std::string names;
  for (const auto& g : gpus) names += (names.empty() ? "\"" : ", \"") + g + "\"";
  throw Error(ErrorKind::kBadInput, "no CUDA device here and the database holds several GPUs (" + names +
                                        "); choose one with --gpu NAME");
}

}  // namespace ktune::cli
