#include "measure/copy_kernel.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"

namespace ktune::measure {

namespace {
const char* kSource = R"CUDA(
// 16-byte load and store; STREAMING: with the evict-first (.cs) hint, the data used once.
template <bool STREAMING>
__device__ __forceinline__ uint4 ktune_copy_load(const uint4* p) {
  if (!STREAMING) return *p;
  uint4 v;
  asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
template <bool STREAMING>
__device__ __forceinline__ void ktune_copy_store(uint4* p, uint4 v) {
  if (!STREAMING) {
    *p = v;
    return;
  }
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// Each block iteration moves blockDim.x * UNROLL 16-byte vectors; all loads issue before the stores.
template <int UNROLL, bool STREAMING>
__global__ void ktune_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, unsigned long long n) {
  const unsigned long long tile = (unsigned long long)blockDim.x * UNROLL;
  const unsigned long long stride = (unsigned long long)gridDim.x * tile;
  for (unsigned long long base = (unsigned long long)blockIdx.x * tile + threadIdx.x; base < n; base += stride) {
    uint4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const unsigned long long i = base + (unsigned long long)u * blockDim.x;
      if (i < n) v[u] = ktune_copy_load<STREAMING>(src + i);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const unsigned long long i = base + (unsigned long long)u * blockDim.x;
      if (i < n) ktune_copy_store<STREAMING>(dst + i, v[u]);
    }
  }
}
)CUDA";

constexpr int64_t kMaxGrid = 2147483647;  // gridDim.x limit
}  // namespace

CopyConfig CopyConfig::from_json(const nlohmann::json& j) {
  if (!j.is_object())
    throw Error(ErrorKind::kBadInput, fmt::format("copy config must be a JSON object, got {}", j.dump()));
  CopyConfig c;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_number_integer()) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("copy config '{}' must be an integer, got {}", key, value.dump()));
    }
    if (key == "unroll") {
      c.unroll = value.get<int>();
    } else if (key == "block") {
      c.block = value.get<int>();
    } else if (key == "grid") {
      c.grid = value.get<int64_t>();
    } else if (key == "streaming") {
      const int64_t v = value.get<int64_t>();
      if (v != 0 && v != 1)
        throw Error(ErrorKind::kBadInput, fmt::format("copy streaming={} (expected 0 or 1)", v));
      c.streaming = v == 1;
    } else {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("unknown copy config key '{}' (known: unroll, block, grid, streaming)", key));
    }
  }
  if (c.unroll != 1 && c.unroll != 2 && c.unroll != 4 && c.unroll != 8) {
    throw Error(ErrorKind::kBadInput, fmt::format("copy unroll={} (expected 1, 2, 4 or 8)", c.unroll));
  }
  if (c.block < 32 || c.block > 1024 || c.block % 32 != 0) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("copy block={} (expected a multiple of 32 in 32..1024)", c.block));
  }
  if (c.grid < 0 || c.grid > kMaxGrid)
    throw Error(ErrorKind::kBadInput, fmt::format("copy grid={} out of range", c.grid));
  return c;
}

nlohmann::json CopyConfig::to_json() const {
  return {{"unroll", unroll}, {"block", block}, {"grid", grid}, {"streaming", streaming ? 1 : 0}};
}

std::string CopyConfig::name(DType dtype) const {
  std::string n = fmt::format("copy.{}.u{}.b{}", ktune::to_string(dtype), unroll, block);
  if (grid > 0) n += fmt::format(".g{}", grid);
  if (streaming) n += ".cs";
  return n;
}

const std::string& copy_kernel_source() {
  static const std::string source = kSource;
  return source;
}

std::string copy_name_expression(const CopyConfig& config) {
  return fmt::format("ktune_copy<{},{}>", config.unroll, config.streaming ? "true" : "false");
}

void check_copy_size(uint64_t n, DType dtype) {
  const uint64_t bytes = n * size_of(dtype);
  if (n == 0 || bytes % 16 != 0) {
    throw Error(
        ErrorKind::kBadInput,
        fmt::format("copy of n={} {} elements is {} bytes, not a positive multiple of 16 (the kernel moves "
                    "16-byte vectors)",
                    n, to_string(dtype), bytes));
  }
}

CandidateRequest make_copy_request(uint64_t n, DType dtype, const CopyConfig& config, const std::string& arch,
                                   const TimingOptions& timing, int device) {
  check_copy_size(n, dtype);
  const uint64_t bytes = n * size_of(dtype);
  harness::CompileRequest creq;
  creq.source = copy_kernel_source();
  creq.program_name = "ktune_copy.cu";
  creq.name_expressions = {copy_name_expression(config)};
  creq.arch = arch;
  harness::NvrtcCompiler compiler;
  const harness::CompileResult compiled = compiler.compile(creq);

  const uint64_t vectors = bytes / 16;
  const uint64_t per_block = static_cast<uint64_t>(config.block) * static_cast<uint64_t>(config.unroll);
  const int64_t grid = config.grid > 0
                           ? config.grid
                           : static_cast<int64_t>(std::min<uint64_t>((vectors + per_block - 1) / per_block,
                                                                     static_cast<uint64_t>(kMaxGrid)));
  CandidateRequest r;
  r.name = config.name(dtype);
  r.device = device;
  r.buffers = {{"src", dtype, n, BufferSpec::Init::kFill, BufferFill::random(1.0)},
               {"dst", dtype, n, BufferSpec::Init::kPoison}};
  LaunchSpec& copy = r.launches.emplace_back();
  copy.cubin = compiled.cubin;
  copy.function = compiled.lowered_names.at(copy_name_expression(config));
  copy.grid = {static_cast<uint32_t>(grid), 1, 1};
  copy.block = {static_cast<uint32_t>(config.block), 1, 1};
  copy.args = {KernelArg::buf("src"), KernelArg::buf("dst"), KernelArg::u64(vectors)};
  r.checks = {{"dst", "src"}};
  r.timing = timing;
  r.bytes_moved = 2.0 * static_cast<double>(bytes);
  return r;
}

}  // namespace ktune::measure
