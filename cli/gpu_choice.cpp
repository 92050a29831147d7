#include "cli/gpu_choice.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "harness/device_info.hpp"
#include "ktune/error.hpp"

namespace ktune::cli {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

std::string match_gpu_name(const cache::ConfigCache& db, const std::string& name) {
  const auto gpus = db.gpu_names();
  if (gpus.empty() || std::find(gpus.begin(), gpus.end(), name) != gpus.end()) return name;
  std::vector<std::string> matches;
  for (const auto& g : gpus) {
    if (lower(g).find(lower(name)) != std::string::npos) matches.push_back(g);
  }
  if (matches.size() == 1) return matches.front();
  if (matches.empty()) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("--gpu \"{}\": the database {} holds no such GPU; it holds {}", name,
                            db.path().string(), quoted_list(gpus)));
  }
  throw Error(ErrorKind::kBadInput,
              fmt::format("--gpu \"{}\" matches several GPUs of the database: {}; name one of them", name,
                          quoted_list(matches)));
}

std::string choose_gpu(const cache::ConfigCache& db, const std::string& gpu, int device) {
  if (!gpu.empty()) return match_gpu_name(db, gpu);
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
  throw Error(ErrorKind::kBadInput, "no CUDA device here and the database holds several GPUs (" +
                                        quoted_list(gpus) + "); choose one with --gpu NAME");
}

}  // namespace ktune::cli
