#pragma once
/// A candidate's whole launch sequence on the device (candidate.hpp: a split-K GEMM is the GEMM and
/// its reduction, the atomic variant zeroes its workspace first): every launch loaded (each distinct
/// cubin once), checked against the device's limits, bound to the buffer sets, and enqueued in
/// order as one run. A vendor-library call (measure/library_call.hpp) is a sequence of its own. A timing
/// sample, a graph-batch element, the verified run and the counter pass are each one run of the sequence: the
/// caller (dispatch) pays for all of it on every call.

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/device_info.hpp"
#include "measure/candidate.hpp"
#include "measure/candidate_launch.hpp"
#include "measure/library_launch.hpp"

namespace ktune::measure {

class LoadedSequence {
 public:
  /// Loads every launch of `launches` (not empty); `main_launch` names the one whose resources are
  /// reported at the top level. Throws ktune::Error(kBadInput) for an empty sequence or an index
  /// outside it, and what LoadedKernel throws.
  LoadedSequence(const std::vector<LaunchSpec>& launches, std::size_t main_launch,
                 const harness::DeviceInfo& device);

  /// "" when every launch fits the device; else the first violation, naming the launch when the
  /// sequence has more than one.
  std::string limit_violation() const;
  /// The main launch's resources, plus "launches": every launch's, in order (when more than one).
  nlohmann::json resources() const;
  /// Lowered names of the launches, in order.
  std::vector<std::string> functions() const;
  /// Launches a run makes (a library call counts as one, whatever kernels the library enqueues).
  std::size_t size() const { return library_ ? 1 : kernels_.size(); }
  /// Whether the sequence is a vendor-library call (its kernels' names are the library's).
  bool is_library_call() const { return library_ != nullptr; }

  /// Packs every launch's arguments once per buffer set.
  void bind(const std::vector<const BufferSet*>& sets);
  /// Enqueues one run: every launch in order on `stream`, bound to set `set`.
  void launch(std::size_t set, CUstream stream);

 private:
  std::vector<LoadedKernel> kernels_;
  std::unique_ptr<LoadedLibraryCall> library_;  ///< set instead of kernels_ for a library call
  std::size_t main_ = 0;
};

}  // namespace ktune::measure
