#include "measure/candidate_launch.hpp"

#include <cstring>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "harness/tensor_map.hpp"
#include "ktune/error.hpp"
#include "measure/buffer_guard.hpp"

namespace ktune::measure {

namespace {

int func_attr(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  KTUNE_CU_CHECK(harness::driver().cuFuncGetAttribute(&v, a, f));
  return v;
}
}  // namespace

CUdeviceptr BufferSet::at(const std::string& name) const {
  auto it = buffers.find(name);
  if (it == buffers.end())
    throw Error(ErrorKind::kBadInput, fmt::format("no buffer named '{}' in the request", name));
  return it->second.get() + kGuardBytes;  // past the guard before it (buffer_guard.hpp)
}

BufferSet allocate_buffers(const std::vector<BufferSpec>& specs) {
  BufferSet set;
  for (const BufferSpec& s : specs) {
    if (s.count == 0) throw Error(ErrorKind::kBadInput, fmt::format("buffer '{}' has no elements", s.name));
    if (!set.buffers.emplace(s.name, harness::DeviceBuffer(s.bytes() + 2 * kGuardBytes)).second) {
      throw Error(ErrorKind::kBadInput, fmt::format("buffer '{}' is declared twice", s.name));
    }
  }
  return set;
}

BufferSet clone_buffers(const BufferSet& from, CUstream stream) {
  BufferSet set;
  for (const auto& [name, buf] : from.buffers) {
    harness::DeviceBuffer copy(buf.size());
    KTUNE_CU_CHECK(harness::driver().cuMemcpyDtoDAsync(copy.get(), buf.get(), buf.size(), stream));
    set.buffers.emplace(name, std::move(copy));
  }
  return set;
}

LoadedKernel::LoadedKernel(const LaunchSpec& spec, const harness::DeviceInfo& device)
    : LoadedKernel(spec, std::make_shared<const harness::Module>(harness::Module::load(spec.cubin)), device) {
}

LoadedKernel::LoadedKernel(const LaunchSpec& spec, std::shared_ptr<const harness::Module> module,
                           const harness::DeviceInfo& device)
    : spec_(spec), module_(std::move(module)) {
  spec_.cubin.clear();  // the module holds the code; a copy of a few MiB per launch is not needed
  function_ = module_->function(spec_.function);
  const int regs = func_attr(function_, CU_FUNC_ATTRIBUTE_NUM_REGS);
  const int static_smem = func_attr(function_, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  const int local = func_attr(function_, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  const int max_threads = func_attr(function_, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  const uint64_t threads = uint64_t{spec_.block[0]} * spec_.block[1] * spec_.block[2];
  const uint64_t smem = uint64_t{spec_.shared_bytes} + static_cast<uint64_t>(static_smem);
  resources_ = {{"registers", regs},
                {"static_shared_bytes", static_smem},
                {"dynamic_shared_bytes", spec_.shared_bytes},
                {"local_bytes", local},
                {"max_threads_per_block", max_threads},
                {"threads_per_block", threads}};
  if (threads == 0 || spec_.grid[0] == 0 || spec_.grid[1] == 0 || spec_.grid[2] == 0) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("empty launch geometry grid ({},{},{}) block ({},{},{})", spec_.grid[0],
                            spec_.grid[1], spec_.grid[2], spec_.block[0], spec_.block[1], spec_.block[2]));
  }
  if (threads > static_cast<uint64_t>(max_threads)) {
    violation_ = fmt::format("{} threads per block > {} this kernel allows ({} registers per thread)",
                             threads, max_threads, regs);
    return;
  }
  if (device.smem_per_block_optin > 0 && smem > static_cast<uint64_t>(device.smem_per_block_optin)) {
    violation_ = fmt::format("{} bytes of shared memory per block > {} the device allows", smem,
                             device.smem_per_block_optin);
    return;
  }
  harness::prepare_function(function_, spec_.shared_bytes);
  int blocks_per_sm = 0;
  KTUNE_CU_CHECK(harness::driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, function_, static_cast<int>(threads), spec_.shared_bytes));
  resources_["blocks_per_sm"] = blocks_per_sm;
  if (blocks_per_sm == 0) violation_ = "occupancy is zero: one block does not fit on an SM";
}

void LoadedKernel::bind(const std::vector<const BufferSet*>& sets) {
  packed_.clear();
  for (const BufferSet* set : sets) {
    Packed p;
    p.slots.resize(spec_.args.size());
    for (std::size_t i = 0; i < spec_.args.size(); ++i) {
      const KernelArg& a = spec_.args[i];
      auto& slot = p.slots[i].bytes;
      slot.fill(std::byte{0});
      auto put = [&](auto v) {
        static_assert(sizeof v <= sizeof slot);
        std::memcpy(slot.data(), &v, sizeof v);
      };
      switch (a.kind) {
        case KernelArg::Kind::kBuffer:
          put(set->at(a.buffer));
          break;
        case KernelArg::Kind::kI32:
          put(static_cast<int32_t>(a.i));
          break;
        case KernelArg::Kind::kU32:
          put(static_cast<uint32_t>(a.i));
          break;
        case KernelArg::Kind::kI64:
          put(static_cast<int64_t>(a.i));
          break;
        case KernelArg::Kind::kU64:
          put(static_cast<uint64_t>(a.i));
          break;
        case KernelArg::Kind::kF32:
          put(static_cast<float>(a.f));
          break;
        case KernelArg::Kind::kF64:
          put(a.f);
          break;
        case KernelArg::Kind::kTensorMap: {
          put(harness::encode_tensor_map(harness::tensor_map_2d(a.map_dtype, a.map), set->at(a.buffer)));
          break;
        }
      }
    }
    packed_.push_back(std::move(p));
  }
  for (Packed& p : packed_) {
    for (auto& slot : p.slots) p.pointers.push_back(slot.bytes.data());
  }
}

void LoadedKernel::launch(std::size_t set, CUstream stream) {
  Packed& p = packed_.at(set);
  KTUNE_CU_CHECK(harness::driver().cuLaunchKernel(
      function_, spec_.grid[0], spec_.grid[1], spec_.grid[2], spec_.block[0], spec_.block[1], spec_.block[2],
      spec_.shared_bytes, stream, p.pointers.empty() ? nullptr : p.pointers.data(), nullptr));
}

}  // namespace ktune::measure
