// Two operators of a decoder layer through ktune::Runtime, captured into one CUDA graph and
// replayed: the residual add fused with RMSNorm (residual updated in place), then SwiGLU on a
// fused [tokens, 2 * inter] gate/up input. Checks both against plain CPU loops.
//
//   ktune tune --kernel rmsnorm,swiglu --shape ... --dtype f32   # optional: else the default configs
//   ktune_ops_example [--db PATH] [TOKENS]                        # default 4 tokens
//
// Exit 0: right; 1: wrong; 2: bad input; 3: no GPU. Written as a user's program: only the installed
// header ktune/ktune.hpp and the CUDA runtime (cudaMalloc, cudaStreamBeginCapture, cudaGraphLaunch);
// a cudaStream_t is a ktune::Stream.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_helpers.hpp"
#include "ktune/ktune.hpp"

namespace {

constexpr int64_t kHidden = 4096;  // Llama-3-8B
constexpr int64_t kInter = 14336;
constexpr float kEps = 1e-5f;

std::vector<float> random_values(std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> mag(0.25f, 2.0f);
  std::vector<float> out(n);
  for (auto& v : out) v = (rng() & 1 ? -1.0f : 1.0f) * mag(rng);
  return out;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double e = std::abs(got[i] - ref[i]) / (std::abs(ref[i]) + 1e-3);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  ktune::RuntimeOptions options;
  int64_t tokens = 4;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
      options.db_path = argv[++i];
    } else {
      tokens = std::stoll(argv[i]);
    }
  }
  using example::check;
  using example::DeviceMemory;
  try {
    ktune::Runtime rt(options);
    const ktune::DType f32 = ktune::DType::kF32;
    // Before capture: look-up, module load, workspace, for exactly these keys.
    const auto x = random_values(tokens * kHidden, 1), res = random_values(tokens * kHidden, 2),
               w = random_values(kHidden, 3), gu = random_values(tokens * 2 * kInter, 4);
    const DeviceMemory dx = DeviceMemory::of(x), dres = DeviceMemory::of(res), dw = DeviceMemory::of(w),
                       dgu = DeviceMemory::of(gu);
    const DeviceMemory dy(x.size() * 4), dout(static_cast<std::size_t>(tokens * kInter) * 4);
    auto ptr = [](const DeviceMemory& b) { return b.get(); };
    // The residual add fused into the norm, in place (residual_out = residual).
    const ktune::RmsNormArgs norm_args{.x = ptr(dx),
                                       .residual = ptr(dres),
                                       .w = ptr(dw),
                                       .y = ptr(dy),
                                       .residual_out = ptr(dres),
                                       .rows = tokens,
                                       .hidden = kHidden,
                                       .eps = kEps,
                                       .dtype = f32};
    const ktune::SwigluArgs act_args{.x = ptr(dgu), .out = ptr(dout), .m = tokens, .i = kInter, .dtype = f32};
    // Before capture: look-up, module load, workspace, for exactly these keys.
    const ktune::PlanInfo norm = rt.prepare(norm_args);
    const ktune::PlanInfo act = rt.prepare(act_args);
    std::printf("%s: rmsnorm -> %s, swiglu -> %s\n", rt.gpu_name().c_str(), norm.config_name.c_str(),
                act.config_name.c_str());

    cudaStream_t stream = nullptr;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    const auto s = reinterpret_cast<ktune::Stream>(stream);
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    rt.rmsnorm(norm_args, s);
    rt.swiglu(act_args, s);
    cudaGraph_t graph = nullptr;
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");  // once: the residual is updated in place
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const auto y = dy.download<float>(x.size());
    const auto new_res = dres.download<float>(x.size());
    const auto out = dout.download<float>(static_cast<std::size_t>(tokens * kInter));
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);

    std::vector<double> y_ref(x.size()), res_ref(x.size()), out_ref(out.size());
    for (int64_t t = 0; t < tokens; ++t) {
      double sum = 0;
      for (int64_t j = 0; j < kHidden; ++j) {
        const std::size_t i = static_cast<std::size_t>(t * kHidden + j);
        res_ref[i] = static_cast<float>(x[i] + res[i]);  // the sum is stored in the dtype
        sum += res_ref[i] * res_ref[i];
      }
      const double inv = 1.0 / std::sqrt(sum / kHidden + kEps);
      for (int64_t j = 0; j < kHidden; ++j) {
        const std::size_t i = static_cast<std::size_t>(t * kHidden + j);
        y_ref[i] = res_ref[i] * inv * w[static_cast<std::size_t>(j)];
      }
      for (int64_t j = 0; j < kInter; ++j) {
        const double g = gu[static_cast<std::size_t>(t * 2 * kInter + j)];
        const double u = gu[static_cast<std::size_t>(t * 2 * kInter + kInter + j)];
        out_ref[static_cast<std::size_t>(t * kInter + j)] = g / (1 + std::exp(-g)) * u;
      }
    }
    const double err =
        std::max({relative_error(y, y_ref), relative_error(new_res, res_ref), relative_error(out, out_ref)});
    const double tolerance = 1e-4;  // f32 outputs, f32 arithmetic in another order
    std::printf("max relative error %.3g (tolerance %.3g): %s\n", err, tolerance,
                err <= tolerance ? "correct" : "WRONG");
    return err <= tolerance ? 0 : 1;
  } catch (const ktune::Error& e) {
    std::fprintf(stderr, "ktune_ops_example: %s\n", e.what());
    return ktune::exit_code(e.kind());
  }
}
