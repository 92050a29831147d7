#include "gpu_plan_runner.hpp"

#include <cstring>
#include <random>
#include <semaphore>
#include <thread>

#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"
#include "harness/module.hpp"
#include "kernel_templates/compile_request.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates::testing {
namespace {

// Compiles in flight at once: one a core (NVRTC is single-threaded per program).
std::counting_semaphore<256>& compile_slots() {
  static std::counting_semaphore<256> slots(
      std::max(1u, std::min(256u, std::thread::hardware_concurrency())));
  return slots;
}

}  // namespace

std::string KernelCache::key(const CompileSpec& spec) {
  std::string k = spec.source_name;
  for (const auto& e : spec.name_expressions) k += "|" + e;
  return k;
}

void KernelCache::prefetch(const CompileSpec& spec) {
  const std::string k = key(spec);
  if (pending_.count(k) != 0) return;
  harness::CompileRequest request = make_compile_request(spec, library_, arch_);
  pending_[k] = std::async(std::launch::async, [this, request = std::move(request)] {
                  compile_slots().acquire();
                  struct Release {
                    ~Release() { compile_slots().release(); }
                  } release;
                  return compiler_.compile(request);
                }).share();
}

CUfunction KernelCache::function(const CompileSpec& spec, const std::string& name_expression) {
  prefetch(spec);
  const std::string k = key(spec);
  const harness::CompileResult& result = pending_.at(k).get();
  auto module = modules_.find(k);
  if (module == modules_.end()) module = modules_.emplace(k, harness::Module::load(result.cubin)).first;
  return module->second.function(result.lowered_names.at(name_expression));
}

void DeviceTensors::ensure(const TensorSpec& spec, std::size_t offset_bytes) {
  const auto it = slots_.find(spec.name);
  if (it != slots_.end() && it->second.bytes >= static_cast<std::size_t>(spec.bytes())) return;
  if (it != slots_.end()) slots_.erase(it);  // too small (a workspace of a larger SPLIT_K): reallocate
  Slot s;
  s.bytes = static_cast<std::size_t>(spec.bytes());
  s.offset = offset_bytes;
  s.buffer = harness::DeviceBuffer(s.bytes + offset_bytes + 16);
  slots_.emplace(spec.name, std::move(s));
}

CUdeviceptr DeviceTensors::ptr(const std::string& name) const {
  const Slot& s = slots_.at(name);
  return s.buffer.get() + s.offset;
}

void DeviceTensors::poison(const std::string& name) { slots_.at(name).buffer.fill_u8(0xFF); }

void DeviceTensors::upload(const std::string& name, const std::vector<uint8_t>& bytes) {
  Slot& s = slots_.at(name);
  s.buffer.upload(bytes.data(), bytes.size(), s.offset);
}

std::vector<uint8_t> DeviceTensors::download(const std::string& name, std::size_t bytes) const {
  const Slot& s = slots_.at(name);
  std::vector<uint8_t> out(bytes);
  s.buffer.download(out.data(), bytes, s.offset);
  return out;
}

void run_plan(KernelCache& kernels, const CompileSpec& compile, const LaunchPlan& plan,
              DeviceTensors& tensors) {
  std::vector<uint64_t> ptrs;
  for (const auto& t : plan.tensors) ptrs.push_back(tensors.ptr(t.name));
  for (const KernelLaunch& l : plan.launches) {
    CUfunction f = kernels.function(compile, l.name_expression);
    harness::prepare_function(f, l.dims.dynamic_smem_bytes);
    PackedArgs args(plan, l, ptrs);
    harness::launch(f, {l.dims.grid.x, l.dims.grid.y, l.dims.grid.z},
                    {l.dims.block.x, l.dims.block.y, l.dims.block.z}, l.dims.dynamic_smem_bytes, nullptr,
                    args.data());
  }
  KTUNE_CU_CHECK(harness::driver().cuCtxSynchronize());
}

std::vector<uint8_t> random_tensor(DType dtype, int64_t elements, uint64_t seed,
                                   std::vector<double>& values) {
  std::mt19937_64 rng(seed);
  const std::size_t size = ktune::size_of(dtype);
  std::vector<uint8_t> bytes(static_cast<std::size_t>(elements) * size);
  values.resize(static_cast<std::size_t>(elements));
  for (int64_t i = 0; i < elements; ++i) {
    const uint64_t r = rng();
    const float v =
        static_cast<float>((r & 1) != 0 ? -1 : 1) * static_cast<float>(128 + ((r >> 1) & 127)) / 256.0f;
    values[static_cast<std::size_t>(i)] = v;
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    uint8_t* out = bytes.data() + static_cast<std::size_t>(i) * size;
    if (dtype == DType::kF32) {
      std::memcpy(out, &v, 4);
    } else if (dtype == DType::kBF16) {
      const auto h = static_cast<uint16_t>(bits >> 16);  // exact: the low 16 bits are zero
      std::memcpy(out, &h, 2);
    } else if (dtype == DType::kF16) {
      // |v| in [0.5, 1): exponent -1, 7 mantissa bits; both fit binary16 exactly.
      const uint32_t sign = (bits >> 16) & 0x8000u;
      const uint32_t exp = ((bits >> 23) & 0xFFu) - 127u + 15u;
      const auto h = static_cast<uint16_t>(sign | (exp << 10) | ((bits & 0x7FFFFFu) >> 13));
      std::memcpy(out, &h, 2);
    } else {
      throw Error(ErrorKind::kBadInput, "random_tensor: unsupported dtype");
    }
  }
  return bytes;
}

GpuSession& gpu_session(const ArchRejection& arch_rejection) {
  static GpuSession session = [&] {
    GpuSession out;
    try {
      if (harness::device_count() < 1) throw Error(ErrorKind::kNoDevice, "no CUDA device");
      out.arch = harness::query_device(0).arch();
      if (arch_rejection) {
        if (auto why = arch_rejection(out.arch)) throw Error(ErrorKind::kNoDevice, *why);
      }
      out.context = std::make_unique<harness::PrimaryContext>(0);
      out.kernels = std::make_unique<KernelCache>(out.arch);
    } catch (const Error& e) {
      out.context.reset();
      out.skip_reason = std::string("no usable GPU: ") + e.what();
    }
    return out;
  }();
  return session;
}

}  // namespace ktune::kernel_templates::testing
