// Multiplies through ktune::Runtime and checks the answer against a plain CPU product.
//
//   ktune tune --kernel gemm --shape m=16,n=4096,k=4096 --dtype bf16     # once, on this GPU
//   ktune_gemm_example [--db PATH] [M N K]                                # default 16 4096 4096
//
// Exit 0: the answer is right; 1: it is not; 3: no GPU. Written as a user's program: only the
// installed header ktune/ktune.hpp and the CUDA runtime (cudaMalloc, cudaMemcpy); a cudaStream_t is
// a ktune::Stream. It builds against an install (pkg-config ktune, or the build tree's
// libktune_runtime.so) the same way.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_helpers.hpp"
#include "ktune/ktune.hpp"

namespace {

using example::check;
using example::DeviceMemory;

uint16_t to_bf16(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t h) {
  const uint32_t u = uint32_t{h} << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

const char* source_name(ktune::PlanInfo::Source s) {
  switch (s) {
    case ktune::PlanInfo::Source::kTuned:
      return "tuned for this shape";
    case ktune::PlanInfo::Source::kNearest:
      return "nearest tuned shape";
    case ktune::PlanInfo::Source::kDefault:
      return "default config (shape not tuned)";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  ktune::RuntimeOptions options;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
      options.db_path = argv[++i];
    } else {
      dims.push_back(std::stoll(argv[i]));
    }
  }
  const int64_t m = dims.size() == 3 ? dims[0] : 16;
  const int64_t n = dims.size() == 3 ? dims[1] : 4096;
  const int64_t k = dims.size() == 3 ? dims[2] : 4096;
  try {
    ktune::Runtime rt(options);
    ktune::GemmArgs args{.m = m, .n = n, .k = k, .dtype = ktune::DType::kBF16, .layout = ktune::Layout::kNT};
    const ktune::PlanInfo info = rt.prepare(args);
    std::printf("%s: gemm m=%lld n=%lld k=%lld bf16 nt -> %s (%s", rt.gpu_name().c_str(),
                static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
                info.config_name.c_str(), source_name(info.source));
    if (!info.tuned_shape.empty())
      std::printf(", %s, %.2f us", info.tuned_shape.c_str(), info.tuned_median_us);
    std::printf(")\n");

    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<uint16_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(n * k));
    for (auto& x : a) x = to_bf16(dist(rng));
    for (auto& x : b) x = to_bf16(dist(rng));
    const DeviceMemory da = DeviceMemory::of(a), db = DeviceMemory::of(b);
    const DeviceMemory dc(static_cast<size_t>(m * n) * 2);
    // NaN everywhere: an element the kernel skips cannot pass the check.
    check(cudaMemset(dc.get(), 0xFF, static_cast<size_t>(m * n) * 2), "cudaMemset");

    args.a = da.get();
    args.b = db.get();
    args.c = dc.get();
    rt.gemm(args, nullptr);  // the legacy default stream, which cudaMemcpy waits for
    const auto c = dc.download<uint16_t>(static_cast<size_t>(m * n));

    double worst = 0;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double ref = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = double{from_bf16(a[i * k + p])} * from_bf16(b[j * k + p]);
          ref += x;
          mag += std::abs(x);
        }
        const double got = from_bf16(c[i * n + j]);
        // bf16 output: 2^-8 relative rounding of the result, plus f32 accumulation error.
        const double err = std::abs(got - ref) / (mag + 1e-30);
        if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
      }
    }
    const double tolerance = 1.0 / 128;
    std::printf("max |C - C_ref| / sum|a*b| = %.3g (tolerance %.3g): %s\n", worst, tolerance,
                worst <= tolerance ? "correct" : "WRONG");
    return worst <= tolerance ? 0 : 1;
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_gemm_example: %s\n", e.what());
    return ktune::exit_code(e.kind());
  }
}
