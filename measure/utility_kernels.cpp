#include "measure/utility_kernels.hpp"

#include <fmt/format.h>

#include "harness/nvrtc_compiler.hpp"
#include "ktune/error.hpp"

namespace ktune::measure {

namespace {
constexpr DType kAll[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8E4M3, DType::kFP8E5M2};
constexpr IntType kIntegers[] = {IntType::kI32, IntType::kI64, IntType::kU8};
// Floating-point buffers have no sequence fill, integer buffers no random one (BufferFill).
constexpr BufferFill::Kind kFloatFills[] = {BufferFill::Kind::kRandom, BufferFill::Kind::kRange,
                                            BufferFill::Kind::kPattern};
constexpr BufferFill::Kind kIntFills[] = {BufferFill::Kind::kRange, BufferFill::Kind::kPattern,
                                          BufferFill::Kind::kSequence};

// No #include: NVRTC does not build in cuda_fp16.h and friends, and the harness must not depend on
// where the toolkit's headers are. Elements are handled as raw bits: KIND is the DType index
// (0 f32, 1 f16, 2 bf16, 3 fp8e4m3, 4 fp8e5m2).
const char* kSource = R"CUDA(
template <int KIND> struct ktune_bits;
template <> struct ktune_bits<0> { typedef unsigned int type; enum { E = 8, M = 23, FN = 0 }; };
template <> struct ktune_bits<1> { typedef unsigned short type; enum { E = 5, M = 10, FN = 0 }; };
template <> struct ktune_bits<2> { typedef unsigned short type; enum { E = 8, M = 7, FN = 0 }; };
template <> struct ktune_bits<3> { typedef unsigned char type; enum { E = 4, M = 3, FN = 1 }; };
template <> struct ktune_bits<4> { typedef unsigned char type; enum { E = 5, M = 2, FN = 0 }; };

// splitmix64 finaliser of (index, seed): a counter-based RNG, so any element can be regenerated.
__device__ __forceinline__ unsigned long long ktune_mix(unsigned long long i, unsigned long long seed) {
  unsigned long long x = i + (seed + 1ull) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27; x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// float -> format bits, truncating the mantissa and clamping the exponent to the normal range:
// a non-zero input never becomes zero, Inf or NaN (fill values need not be rounded, only valid).
template <int KIND>
__device__ __forceinline__ typename ktune_bits<KIND>::type ktune_encode(float f) {
  typedef ktune_bits<KIND> B;
  const unsigned x = __float_as_uint(f);
  if (KIND == 0) return x;
  const unsigned sign = x >> 31;
  const int bias = (1 << (B::E - 1)) - 1;
  int e = (int)((x >> 23) & 0xffu) - 127;
  unsigned m = (x & 0x7fffffu) >> (23 - B::M);
  const int emax = B::FN ? (1 << B::E) - 1 - bias : (1 << B::E) - 2 - bias;
  if (e < 1 - bias) { e = 1 - bias; m = 0; }
  if (e > emax) { e = emax; m = (1u << B::M) - 1; }
  if (B::FN && e == emax && m == (1u << B::M) - 1) m -= 1;  // S.1111.111 is NaN in E4M3FN
  return (typename B::type)((sign << (B::E + B::M)) | ((unsigned)(e + bias) << B::M) | m);
}

template <int KIND>
__device__ __forceinline__ double ktune_decode(typename ktune_bits<KIND>::type bits) {
  typedef ktune_bits<KIND> B;
  if (KIND == 0) return (double)__uint_as_float((unsigned)bits);
  if (KIND == 2) return (double)__uint_as_float((unsigned)bits << 16);
  const unsigned u = bits;
  const unsigned sign = (u >> (B::E + B::M)) & 1u;
  const unsigned e = (u >> B::M) & ((1u << B::E) - 1u);
  const unsigned m = u & ((1u << B::M) - 1u);
  const int bias = (1 << (B::E - 1)) - 1;
  const double s = sign ? -1.0 : 1.0;
  if (B::FN) {
    if (e == (1u << B::E) - 1u && m == (1u << B::M) - 1u) return __longlong_as_double(0x7ff8000000000000ll);
  } else if (e == (1u << B::E) - 1u) {
    return m ? __longlong_as_double(0x7ff8000000000000ll) : s * __longlong_as_double(0x7ff0000000000000ll);
  }
  if (e == 0) return s * ldexp((double)m, 1 - bias - B::M);
  return s * ldexp((double)(m | (1u << B::M)), (int)e - bias - B::M);
}

// Magnitude in [0.25, 1) * scale with a random sign: never zero (see ktune_encode).
template <int KIND>
__global__ void ktune_fill(typename ktune_bits<KIND>::type* __restrict__ p, unsigned long long n,
                           unsigned long long seed, float scale) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned long long h = ktune_mix(i, seed);
    const float mag = 0.25f + 0.75f * (float)(h >> 40) * (1.0f / 16777216.0f);
    p[i] = ktune_encode<KIND>(((h & 1ull) ? -mag : mag) * scale);
  }
}

// Uniform in [lo, hi) from the hash's top 24 bits (a range fill; encoding never gives zero).
template <int KIND>
__global__ void ktune_fill_range(typename ktune_bits<KIND>::type* __restrict__ p, unsigned long long n,
                                 unsigned long long seed, float lo, float hi) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float u = (float)(ktune_mix(i, seed) >> 40) * (1.0f / 16777216.0f);
    p[i] = ktune_encode<KIND>(lo + (hi - lo) * u);
  }
}

// A pattern fill's values, passed by value (BufferFill::kMaxPatternValues).
struct ktune_pattern { double v[64]; unsigned long long n; };

// The pattern repeated; a zero of the pattern stays zero (the pattern as a whole is not all zeros).
template <int KIND>
__global__ void ktune_fill_pattern(typename ktune_bits<KIND>::type* __restrict__ p, unsigned long long n,
                                   ktune_pattern pat) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = pat.v[i % pat.n];
    p[i] = v == 0.0 ? (typename ktune_bits<KIND>::type)0 : ktune_encode<KIND>((float)v);
  }
}

// Integer buffers (T: int, long long, unsigned char). Uniform integers in [lo, lo + span - 1]
// (span 0: the whole 64-bit range).
template <typename T>
__global__ void ktune_fill_int_range(T* __restrict__ p, unsigned long long n, unsigned long long seed,
                                     long long lo, unsigned long long span) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const unsigned long long h = ktune_mix(i, seed);
    p[i] = (T)(lo + (long long)(span ? h % span : h));
  }
}

template <typename T>
__global__ void ktune_fill_int_pattern(T* __restrict__ p, unsigned long long n, ktune_pattern pat) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i] = (T)(long long)pat.v[i % pat.n];
  }
}

// start + i * step, reduced into [0, modulo) when modulo > 0 (the host keeps |start + i * step| < 2^62).
template <typename T>
__global__ void ktune_fill_int_sequence(T* __restrict__ p, unsigned long long n, long long start, long long step,
                                        long long modulo) {
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long v = start + (long long)i * step;
    if (modulo > 0) {
      v %= modulo;
      if (v < 0) v += modulo;
    }
    p[i] = (T)v;
  }
}

// Per block: sums[4*b + {0,1,2,3}] = sum (out-ref)^2, sum ref^2, max |out-ref|, max |ref| over finite
// values; counts[2*b + {0,1}] = non-finite outputs, non-finite references. Block size 256.
__device__ __forceinline__ void ktune_compare_store(double sd, double sr, double md, double mr,
                                                    unsigned long long bo, unsigned long long br, double* sums,
                                                    unsigned long long* counts);

template <int KIND, int REF_KIND>
__global__ void __launch_bounds__(256) ktune_compare(const typename ktune_bits<KIND>::type* __restrict__ out,
                                                     const typename ktune_bits<REF_KIND>::type* __restrict__ ref,
                                                     unsigned long long n, double* sums, unsigned long long* counts) {
  double sd = 0, sr = 0, md = 0, mr = 0;
  unsigned long long bo = 0, br = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double o = ktune_decode<KIND>(out[i]);
    const double r = ktune_decode<REF_KIND>(ref[i]);
    const bool ook = isfinite(o), rok = isfinite(r);
    bo += !ook;
    br += !rok;
    if (rok) { sr += r * r; mr = fmax(mr, fabs(r)); }
    if (ook && rok) { const double d = o - r; sd += d * d; md = fmax(md, fabs(d)); }
  }
  ktune_compare_store(sd, sr, md, mr, bo, br, sums, counts);
}

// Integer outputs: the same sums; the difference is taken in 64-bit integers, so it is non-zero
// exactly when the elements differ (exact comparison needs max |out-ref| == 0).
template <typename T>
__global__ void __launch_bounds__(256) ktune_compare_int(const T* __restrict__ out, const T* __restrict__ ref,
                                                         unsigned long long n, double* sums,
                                                         unsigned long long* counts) {
  double sd = 0, sr = 0, md = 0, mr = 0;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double r = (double)ref[i];
    const double d = (double)((long long)out[i] - (long long)ref[i]);
    sr += r * r; mr = fmax(mr, fabs(r));
    sd += d * d; md = fmax(md, fabs(d));
  }
  ktune_compare_store(sd, sr, md, mr, 0, 0, sums, counts);
}

__device__ __forceinline__ void ktune_compare_store(double sd, double sr, double md, double mr,
                                                    unsigned long long bo, unsigned long long br, double* sums,
                                                    unsigned long long* counts) {
  __shared__ double s[4][256];
  __shared__ unsigned long long c[2][256];
  const unsigned t = threadIdx.x;
  s[0][t] = sd; s[1][t] = sr; s[2][t] = md; s[3][t] = mr; c[0][t] = bo; c[1][t] = br;
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
    if (t < w) {
      s[0][t] += s[0][t + w]; s[1][t] += s[1][t + w];
      s[2][t] = fmax(s[2][t], s[2][t + w]); s[3][t] = fmax(s[3][t], s[3][t + w]);
      c[0][t] += c[0][t + w]; c[1][t] += c[1][t + w];
    }
    __syncthreads();
  }
  if (t == 0) {
    for (int k = 0; k < 4; ++k) sums[4 * blockIdx.x + k] = s[k][0];
    counts[2 * blockIdx.x] = c[0][0];
    counts[2 * blockIdx.x + 1] = c[1][0];
  }
}

// Reads n 16-byte words (the clean L2 flush); writes only for a value no memset writes, so the loads
// cannot be removed and nothing is written.
__global__ void ktune_read_all(const int4* p, unsigned long long n, int* sink) {
  int acc = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const int4 v = p[i];
    acc |= (v.x ^ v.y) | (v.z ^ v.w);
  }
  if (acc == 0x7fffffff) *sink = acc;
}
)CUDA";

std::size_t index_of(DType d) { return static_cast<std::size_t>(d); }
std::size_t index_of(IntType t) { return static_cast<std::size_t>(t); }

/// The CUDA type of an integer element in the source above.
std::string_view int_cuda_type(IntType t) {
  switch (t) {
    case IntType::kI32:
      return "int";
    case IntType::kI64:
      return "long long";
    case IntType::kU8:
      return "unsigned char";
  }
  return "?";
}

std::string_view fill_kernel_name(BufferFill::Kind kind) {
  switch (kind) {
    case BufferFill::Kind::kRandom:
      return "ktune_fill";
    case BufferFill::Kind::kRange:
      return "ktune_fill_range";
    case BufferFill::Kind::kPattern:
      return "ktune_fill_pattern";
    case BufferFill::Kind::kSequence:
    case BufferFill::Kind::kFile:
      break;
  }
  return "";
}

std::string_view int_fill_kernel_name(BufferFill::Kind kind) {
  switch (kind) {
    case BufferFill::Kind::kRange:
      return "ktune_fill_int_range";
    case BufferFill::Kind::kPattern:
      return "ktune_fill_int_pattern";
    case BufferFill::Kind::kSequence:
      return "ktune_fill_int_sequence";
    case BufferFill::Kind::kRandom:
    case BufferFill::Kind::kFile:
      break;
  }
  return "";
}
}  // namespace

const std::string& utility_kernels_source() {
  static const std::string source = kSource;
  return source;
}

std::string fill_name_expression(DType dtype) {
  return fill_name_expression(dtype, BufferFill::Kind::kRandom);
}
std::string fill_name_expression(DType dtype, BufferFill::Kind kind) {
  const std::string_view name = fill_kernel_name(kind);
  if (name.empty())
    throw Error(ErrorKind::kBadInput, fmt::format("no {} fill of {} values", "sequence", to_string(dtype)));
  return fmt::format("{}<{}>", name, index_of(dtype));
}
std::string fill_name_expression(IntType type, BufferFill::Kind kind) {
  const std::string_view name = int_fill_kernel_name(kind);
  if (name.empty())
    throw Error(ErrorKind::kBadInput, fmt::format("no random fill of {} values", to_string(type)));
  return fmt::format("{}<{}>", name, int_cuda_type(type));
}
std::string compare_name_expression(IntType type) {
  return fmt::format("ktune_compare_int<{}>", int_cuda_type(type));
}
std::string compare_name_expression(DType dtype, DType ref_dtype) {
  return fmt::format("ktune_compare<{},{}>", index_of(dtype), index_of(ref_dtype));
}
std::string compare_name_expression(DType dtype) { return compare_name_expression(dtype, dtype); }

UtilityKernels::UtilityKernels(const std::string& arch) {
  harness::CompileRequest req;
  req.source = utility_kernels_source();
  req.program_name = "ktune_utility_kernels.cu";
  req.arch = arch;
  // Outputs are compared with a reference of their own dtype, or with an f32 reference (the kernels'
  // GPU references accumulate and store in f32).
  for (DType d : kAll) {
    req.name_expressions.push_back(fill_name_expression(d));
    req.name_expressions.push_back(compare_name_expression(d));
    if (d != DType::kF32) req.name_expressions.push_back(compare_name_expression(d, DType::kF32));
  }
  for (DType d : kAll) {
    for (auto kind : kFloatFills) req.name_expressions.push_back(fill_name_expression(d, kind));
  }
  for (IntType t : kIntegers) {
    for (auto kind : kIntFills) req.name_expressions.push_back(fill_name_expression(t, kind));
    req.name_expressions.push_back(compare_name_expression(t));
  }
  req.name_expressions.push_back("ktune_read_all");
  harness::NvrtcCompiler compiler;
  const harness::CompileResult res = compiler.compile(req);
  module_ = harness::Module::load(res.cubin);
  read_all_ = module_.function(res.lowered_names.at("ktune_read_all"));
  const auto function = [&](const std::string& expression) {
    return module_.function(res.lowered_names.at(expression));
  };
  for (DType d : kAll) {
    for (auto kind : kFloatFills) {
      fills_[index_of(d)][static_cast<std::size_t>(kind)] = function(fill_name_expression(d, kind));
    }
  }
  for (IntType t : kIntegers) {
    for (auto kind : kIntFills) {
      int_fills_[index_of(t)][static_cast<std::size_t>(kind)] = function(fill_name_expression(t, kind));
    }
    int_compare_[index_of(t)] = function(compare_name_expression(t));
  }
  for (DType d : kAll) {
    compare_[index_of(d)][index_of(d)] = module_.function(res.lowered_names.at(compare_name_expression(d)));
    if (d != DType::kF32) {
      compare_[index_of(d)][index_of(DType::kF32)] =
          module_.function(res.lowered_names.at(compare_name_expression(d, DType::kF32)));
    }
  }
}

CUfunction UtilityKernels::fill(DType dtype, BufferFill::Kind kind) const {
  CUfunction f = fills_[index_of(dtype)][static_cast<std::size_t>(kind)];
  if (f == nullptr)
    throw Error(ErrorKind::kBadInput, fmt::format("no sequence fill of {} values", to_string(dtype)));
  return f;
}

CUfunction UtilityKernels::fill(IntType type, BufferFill::Kind kind) const {
  CUfunction f = int_fills_[index_of(type)][static_cast<std::size_t>(kind)];
  if (f == nullptr)
    throw Error(ErrorKind::kBadInput, fmt::format("no random fill of {} values", to_string(type)));
  return f;
}

CUfunction UtilityKernels::compare(IntType type) const { return int_compare_[index_of(type)]; }
CUfunction UtilityKernels::compare(DType dtype, DType ref_dtype) const {
  CUfunction f = compare_[index_of(dtype)][index_of(ref_dtype)];
  if (f == nullptr) {
    throw Error(ErrorKind::kBadInput, fmt::format("no compare kernel for a {} output against a {} reference",
                                                  to_string(dtype), to_string(ref_dtype)));
  }
  return f;
}

}  // namespace ktune::measure
