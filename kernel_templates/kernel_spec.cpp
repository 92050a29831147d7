#include "kernel_templates/kernel_spec.hpp"

#include <cstring>

#include "harness/tensor_map.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {

int64_t Problem::dim(std::string_view name) const {
  for (const auto& [n, v] : dims) {
    if (n == name) return v;
  }
  throw Error(ErrorKind::kBadInput,
              "shape '" + shape_text() + "' has no dimension '" + std::string(name) + "'");
}

std::string Problem::shape_text() const {
  std::string out;
  for (const auto& [n, v] : dims) {
    if (!out.empty()) out += ',';
    out += n + '=' + std::to_string(v);
  }
  return out;
}

int LaunchPlan::tensor_index(std::string_view name) const {
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return static_cast<int>(i);
  }
  throw Error(ErrorKind::kNotFound, "launch plan has no tensor '" + std::string(name) + "'");
}

void LaunchPlan::set_row_stride(std::string_view name, int64_t stride) {
  TensorSpec& tensor = tensors.at(static_cast<std::size_t>(tensor_index(name)));
  int64_t rows = 0;
  int64_t cols = 0;
  for (const KernelLaunch& l : launches) {
    for (const ArgSpec& a : l.args) {
      if (a.tensor == name && (a.kind == ArgSpec::Kind::kRowStride || a.kind == ArgSpec::Kind::kTensorMap)) {
        rows = a.map[0];
        cols = a.map[1];
      }
    }
  }
  if (cols < 1) {
    throw Error(ErrorKind::kBadInput,
                "launch plan: no argument carries the row stride of tensor '" + std::string(name) + "'");
  }
  if (stride < cols) {
    throw Error(ErrorKind::kBadInput, "launch plan: row stride " + std::to_string(stride) + " of tensor '" +
                                          std::string(name) + "' is shorter than its rows of " +
                                          std::to_string(cols) + " elements");
  }
  for (KernelLaunch& l : launches) {
    for (ArgSpec& a : l.args) {
      if (a.tensor != name) continue;
      if (a.kind == ArgSpec::Kind::kRowStride || a.kind == ArgSpec::Kind::kTensorMap) a.integer = stride;
    }
  }
  tensor.elements = rows * stride;
}

PackedArgs::PackedArgs(const LaunchPlan& plan, const KernelLaunch& launch,
                       std::span<const uint64_t> tensor_ptrs) {
  if (tensor_ptrs.size() != plan.tensors.size()) {
    throw Error(ErrorKind::kBadInput, "PackedArgs: " + std::to_string(tensor_ptrs.size()) +
                                          " device pointers for a plan of " +
                                          std::to_string(plan.tensors.size()) + " tensors");
  }
  slots_.assign(launch.args.size(), Slot{});
  for (std::size_t i = 0; i < launch.args.size(); ++i) {
    const ArgSpec& a = launch.args[i];
    uint64_t& slot = slots_[i].words[0];
    switch (a.kind) {
      case ArgSpec::Kind::kTensor:
        slot = tensor_ptrs[static_cast<std::size_t>(plan.tensor_index(a.tensor))];
        break;
      case ArgSpec::Kind::kNullPointer:
        slot = 0;
        break;
      case ArgSpec::Kind::kI32:
      case ArgSpec::Kind::kRowStride: {
        const auto v = static_cast<int32_t>(a.integer);
        std::memcpy(&slot, &v, sizeof v);
        break;
      }
      case ArgSpec::Kind::kI64:
        std::memcpy(&slot, &a.integer, sizeof a.integer);
        break;
      case ArgSpec::Kind::kF32:
        std::memcpy(&slot, &a.real, sizeof a.real);
        break;
      case ArgSpec::Kind::kTensorMap: {
        const auto t = static_cast<std::size_t>(plan.tensor_index(a.tensor));
        const CUtensorMap encoded = harness::encode_tensor_map(
            harness::tensor_map_2d(plan.tensors[t].dtype, a.map, a.integer), tensor_ptrs[t]);
        static_assert(sizeof encoded <= sizeof(Slot));
        std::memcpy(slots_[i].words, &encoded, sizeof encoded);
        break;
      }
    }
  }
  pointers_.reserve(slots_.size());
  for (auto& s : slots_) pointers_.push_back(s.words);
}

}  // namespace ktune::kernel_templates
