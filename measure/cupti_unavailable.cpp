// Built instead of cupti_activity.cpp and cupti_profiler.cpp when KTUNE_WITH_CUPTI=OFF: counters and
// the second timer report why they are missing; timing goes on.
#include "measure/cupti_activity.hpp"
#include "measure/cupti_profiler.hpp"

namespace ktune::measure {

namespace {
constexpr const char* kWhy = "ktune was built with KTUNE_WITH_CUPTI=OFF";
}

std::unique_ptr<ActivityTimer> ActivityTimer::start(std::string* why) {
  if (why) *why = kWhy;
  return nullptr;
}
ActivityTimer::~ActivityTimer() = default;
std::vector<double> ActivityTimer::stop(const std::string&, std::size_t) { return {}; }
std::vector<double> ActivityTimer::stop(const std::vector<std::string>&, std::size_t) { return {}; }

nlohmann::json profile_counters(CUcontext, int, const std::vector<std::string>&,
                                const std::function<void()>&) {
  return {{"available", false}, {"reason", kWhy}};
}

}  // namespace ktune::measure
