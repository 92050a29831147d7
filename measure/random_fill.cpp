#include "measure/random_fill.hpp"

#include <algorithm>

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
      break;
  }
  KTUNE_CU_CHECK(harness::driver().cuLaunchKernel(function, blocks_for(count), 1, 1, kBlock, 1, 1, 0, stream,
                                                  args, nullptr));
}

}  // namespace ktune::measure
