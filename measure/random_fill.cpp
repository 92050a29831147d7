#include "measure/random_fill.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"
#include "ktune/error.hpp"

namespace ktune::measure {

namespace {

constexpr unsigned kBlock = 256;

/// Grid-stride loops; 64K blocks saturate any current GPU (132 SMs x 8 blocks x 60 waves).
unsigned blocks_for(uint64_t count) {
  return static_cast<unsigned>(std::min<uint64_t>((count + kBlock - 1) / kBlock, 65536));
}

/// The kernels' `ktune_pattern` argument: the values, then their count.
struct PatternArg {
  double v[BufferFill::kMaxPatternValues] = {};
  unsigned long long n = 0;
};

/// A kFile fill: the file's bytes copied into the buffer, which they must fill exactly.
void file_fill(CUdeviceptr ptr, uint64_t bytes, const std::string& path, CUstream stream) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(ErrorKind::kBadInput, fmt::format("fill file {}: cannot be read", path));
  const auto size = static_cast<uint64_t>(in.tellg());
  if (size != bytes) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("fill file {}: {} bytes, the buffer {} (values of its type, little-endian)", path,
                            size, bytes));
  }
  std::vector<char> host(bytes);
  in.seekg(0);
  if (!in.read(host.data(), static_cast<std::streamsize>(bytes)))
    throw Error(ErrorKind::kBadInput, fmt::format("fill file {}: read failed", path));
  KTUNE_CU_CHECK(harness::driver().cuMemcpyHtoDAsync(ptr, host.data(), bytes, stream));
  KTUNE_CU_CHECK(harness::driver().cuStreamSynchronize(stream));  // `host` dies here
}

}  // namespace

void random_fill(const UtilityKernels& kernels, CUdeviceptr ptr, DType dtype, uint64_t count, uint64_t seed,
                 float scale, CUstream stream) {
  if (count == 0) return;
  const unsigned blocks = blocks_for(count);
  unsigned long long n = count;
  unsigned long long s = seed;
  void* args[] = {&ptr, &n, &s, &scale};
  KTUNE_CU_CHECK(harness::driver().cuLaunchKernel(kernels.fill(dtype), blocks, 1, 1, kBlock, 1, 1, 0, stream,
                                                  args, nullptr));
}

void fill_buffer(const UtilityKernels& kernels, CUdeviceptr ptr, DType dtype, std::optional<IntType> integer,
                 uint64_t count, const BufferFill& fill, uint64_t seed, CUstream stream) {
  if (count == 0) return;
  if (auto why = fill.invalid_reason(count, integer)) {
    throw Error(ErrorKind::kBadInput, "fill " + fill.describe() + ": " + *why);
  }
  if (fill.kind == BufferFill::Kind::kRandom) {
    random_fill(kernels, ptr, dtype, count, seed, static_cast<float>(fill.scale), stream);
    return;
  }
  if (fill.kind == BufferFill::Kind::kFile) {
    file_fill(ptr, count * (integer ? size_of(*integer) : size_of(dtype)), fill.path, stream);
    return;
  }
  CUfunction function = integer ? kernels.fill(*integer, fill.kind) : kernels.fill(dtype, fill.kind);
  unsigned long long n = count;
  unsigned long long s = seed;
  PatternArg pattern;
  std::copy(fill.pattern.begin(), fill.pattern.end(), pattern.v);
  pattern.n = fill.pattern.size();
  float lo = static_cast<float>(fill.min);
  float hi = static_cast<float>(fill.max);
  // Integer ranges: the lowest value and max - min + 1 values (0 stands for the whole 64-bit
  // range, where the count wraps); invalid_reason() has checked that both bounds are integers the
  // type holds.
  long long ilo = 0;
  unsigned long long span = 0;
  if (integer && fill.kind == BufferFill::Kind::kRange) {
    ilo = static_cast<long long>(fill.min);
    span = static_cast<unsigned long long>(static_cast<long long>(fill.max)) -
           static_cast<unsigned long long>(ilo) + 1ULL;
  }
  long long start = fill.start;
  long long step = fill.step;
  long long modulo = fill.modulo.value_or(0);
  void* range_args[] = {&ptr, &n, &s, &lo, &hi};
  void* int_range_args[] = {&ptr, &n, &s, &ilo, &span};
  void* pattern_args[] = {&ptr, &n, &pattern};
  void* sequence_args[] = {&ptr, &n, &start, &step, &modulo};
  void** args = nullptr;
  switch (fill.kind) {
    case BufferFill::Kind::kRange:
      args = integer ? int_range_args : range_args;
      break;
    case BufferFill::Kind::kPattern:
      args = pattern_args;
      break;
    case BufferFill::Kind::kSequence:
      args = sequence_args;
      break;
    case BufferFill::Kind::kRandom:
    case BufferFill::Kind::kFile:
      break;
  }
  KTUNE_CU_CHECK(harness::driver().cuLaunchKernel(function, blocks_for(count), 1, 1, kBlock, 1, 1, 0, stream,
                                                  args, nullptr));
}

}  // namespace ktune::measure
