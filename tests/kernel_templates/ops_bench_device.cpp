#include "ops_bench_device.hpp"

#include <algorithm>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "measure/gpu_compare.hpp"
#include "harness/module.hpp"
#include "harness/nvrtc_compiler.hpp"
#include "measure/random_fill.hpp"
#include "measure/tolerance.hpp"
#include "ktune/error.hpp"
#include "ops_gpu_support.hpp"

namespace ktune::kernel_templates::testing {
namespace {

constexpr double kFlushFactor = 2.0;  // 2x the L2, as the harness's L2Flusher in ops_bench
constexpr unsigned kReadBlock = 256;
constexpr unsigned kReadBlocks = 132 * 8;  // every H200 SM, 8 blocks each

/// Reads the whole buffer with 16-byte loads; writes only when a value no memset writes is seen,
/// so the loads cannot be removed and nothing is written.
const char* const kReadAllSource = R"(
__global__ void ktune_read_all(const int4* p, unsigned long long n, int* sink) {
  int acc = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const int4 v = p[i];
    acc |= (v.x ^ v.y) | (v.z ^ v.w);
  }
  if (acc == 0x7fffffff) *sink = acc;
}
)";

std::size_t flush_bytes(int64_t l2_bytes) {
  constexpr int64_t kFallback = 64LL << 20;  // when the driver reports no L2 size
  const int64_t l2 = l2_bytes > 0 ? l2_bytes : kFallback;
  return (static_cast<std::size_t>(kFlushFactor * static_cast<double>(l2)) + 15) & ~std::size_t{15};
}

}  // namespace

FlushMode parse_flush_mode(const std::string& text) {
  if (text == "clean") return FlushMode::kClean;
  if (text == "dirty") return FlushMode::kDirty;
  throw Error(ErrorKind::kBadInput, "--flush takes 'clean' or 'dirty', not '" + text + "'");
}

const char* to_string(FlushMode mode) { return mode == FlushMode::kClean ? "clean" : "dirty"; }

BenchFlusher::BenchFlusher(int64_t l2_bytes, const std::string& arch, FlushMode mode)
    : mode_(mode), written_(flush_bytes(l2_bytes)) {
  if (mode_ == FlushMode::kDirty) return;
  read_ = harness::DeviceBuffer(flush_bytes(l2_bytes));
  read_.fill_u8(0x5A);  // the values (equal words) never make the kernel write
  KTUNE_CU_CHECK(harness::driver().cuCtxSynchronize());  // fill_u8 ran on the legacy default stream
  sink_ = harness::DeviceBuffer(16);
  harness::NvrtcCompiler compiler;
  harness::CompileRequest request;
  request.source = kReadAllSource;
  request.program_name = "ktune_read_all.cu";
  request.name_expressions = {"ktune_read_all"};
  request.arch = arch;
  const harness::CompileResult result = compiler.compile(request);
  module_ = harness::Module::load(result.cubin);
  read_all_ = module_.function(result.lowered_names.at("ktune_read_all"));
}

void BenchFlusher::flush(CUstream stream) {
  ++value_;
  KTUNE_CU_CHECK(harness::driver().cuMemsetD32Async(written_.get(), value_, written_.size() / 4, stream));
  if (mode_ == FlushMode::kDirty) return;
  CUdeviceptr p = read_.get();
  unsigned long long n = read_.size() / 16;
  CUdeviceptr sink = sink_.get();
  void* args[] = {&p, &n, &sink};
  harness::launch(read_all_, {kReadBlocks, 1, 1}, {kReadBlock, 1, 1}, 0, stream, args);
}

void ReadyPlan::enqueue(CUstream stream) const {
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const auto& d = launches[i].dims;
    harness::launch(functions[i], {d.grid.x, d.grid.y, d.grid.z}, {d.block.x, d.block.y, d.block.z},
                    d.dynamic_smem_bytes, stream, args[i]->data());
  }
}

ReadyPlan prepare_plan(KernelCache& kernels, const CompileSpec& compile, const LaunchPlan& plan,
                       const DeviceTensors& tensors) {
  std::vector<uint64_t> ptrs;
  for (const auto& t : plan.tensors) ptrs.push_back(tensors.ptr(t.name));
  ReadyPlan r;
  for (const auto& l : plan.launches) {
    CUfunction f = kernels.function(compile, l.name_expression);
    harness::allow_dynamic_smem(f, l.dims.dynamic_smem_bytes);
    r.functions.push_back(f);
    r.launches.push_back(l);
    r.args.push_back(std::make_unique<PackedArgs>(plan, l, ptrs));
  }
  return r;
}

void fill_inputs_on_device(const Problem& problem, const std::vector<TensorSpec>& tensors,
                           DeviceTensors& device, const harness::UtilityKernels& utility, uint64_t seed,
                           CUstream stream) {
  std::vector<TensorSpec> special;
  for (const TensorSpec& t : tensors) {
    if (t.role == TensorRole::kInput && (is_int32_tensor(t.name) || t.name == "cos_sin")) {
      special.push_back(t);
      continue;
    }
    device.ensure(t);
    if (t.role != TensorRole::kInput) {
      device.poison(t.name);
    } else {
      harness::random_fill(utility, device.ptr(t.name), t.dtype, static_cast<uint64_t>(t.elements), seed++,
                           1.0f, stream);
    }
  }
  HostTensors ignored;
  fill_inputs(problem, special, device, ignored, seed);
  // The poison memsets went to the legacy default stream, the fills to `stream`: wait for both.
  KTUNE_CU_CHECK(harness::driver().cuCtxSynchronize());
}

harness::Verdict verify_on_device(const DeviceTensors& device, const LaunchPlan& plan, const std::string& out,
                                  const LaunchPlan& ref_plan, const std::string& ref, DType dtype,
                                  const harness::UtilityKernels& utility, CUstream stream) {
  const TensorSpec& o = plan.tensors[static_cast<std::size_t>(plan.tensor_index(out))];
  const TensorSpec& r = ref_plan.tensors[static_cast<std::size_t>(ref_plan.tensor_index(ref))];
  const harness::ErrorMetrics m = harness::gpu_compare(utility, device.ptr(out), o.dtype, device.ptr(ref),
                                                       r.dtype, static_cast<uint64_t>(o.elements), stream);
  return harness::judge(m, harness::tolerance_for(dtype));
}

}  // namespace ktune::kernel_templates::testing
