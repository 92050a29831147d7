#include "measure/candidate_sequence.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/module.hpp"
#include "ktune/error.hpp"

namespace ktune::measure {

LoadedSequence::LoadedSequence(const std::vector<LaunchSpec>& launches, std::size_t main_launch,
                               const harness::DeviceInfo& device)
    : main_(main_launch) {
  if (launches.empty()) throw Error(ErrorKind::kBadInput, "a candidate needs at least one launch");
  if (main_launch >= launches.size()) {
    throw Error(ErrorKind::kBadInput, fmt::format("main launch {} is not one of the candidate's {} launches",
                                                  main_launch, launches.size()));
  }
  const bool library =
      std::any_of(launches.begin(), launches.end(), [](const LaunchSpec& l) { return !l.library.is_null(); });
  if (library) {
    if (launches.size() != 1)
      throw Error(ErrorKind::kBadInput, "a library call must be the candidate's only launch");
    library_ = std::make_unique<LoadedLibraryCall>(launches.front());
    return;
  }
  // One module per distinct cubin: the launches of a split-K plan come from one compile.
  std::vector<std::pair<const std::string*, std::shared_ptr<const harness::Module>>> modules;
  kernels_.reserve(launches.size());
  for (const LaunchSpec& l : launches) {
    std::shared_ptr<const harness::Module> module;
    for (const auto& [cubin, loaded] : modules) {
      if (*cubin == l.cubin) module = loaded;
    }
    if (!module) {
      module = std::make_shared<const harness::Module>(harness::Module::load(l.cubin));
      modules.emplace_back(&l.cubin, module);
    }
    kernels_.emplace_back(l, std::move(module), device);
  }
}

std::string LoadedSequence::limit_violation() const {
  if (library_) return library_->limit_violation();
  for (std::size_t i = 0; i < kernels_.size(); ++i) {
    const std::string why = kernels_[i].limit_violation();
    if (why.empty()) continue;
    if (kernels_.size() == 1) return why;
    return fmt::format("launch {} of {} ({}): {}", i + 1, kernels_.size(), kernels_[i].function_name(), why);
  }
  return {};
}

nlohmann::json LoadedSequence::resources() const {
  if (library_) return library_->resources();
  nlohmann::json r = kernels_[main_].resources();
  if (kernels_.size() > 1) {
    nlohmann::json each = nlohmann::json::array();
    for (const LoadedKernel& k : kernels_) {
      nlohmann::json one = k.resources();
      one["function"] = k.function_name();
      each.push_back(std::move(one));
    }
    r["launches"] = std::move(each);
  }
  return r;
}

std::vector<std::string> LoadedSequence::functions() const {
  std::vector<std::string> names;
  if (library_) names.push_back(library_->function_name());
  for (const LoadedKernel& k : kernels_) names.push_back(k.function_name());
  return names;
}

void LoadedSequence::bind(const std::vector<const BufferSet*>& sets) {
  if (library_) library_->bind(sets);
  for (LoadedKernel& k : kernels_) k.bind(sets);
}

void LoadedSequence::launch(std::size_t set, CUstream stream) {
  if (library_) library_->launch(set, stream);
  for (LoadedKernel& k : kernels_) k.launch(set, stream);
}

}  // namespace ktune::measure
