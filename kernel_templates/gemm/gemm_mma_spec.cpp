#include "kernel_templates/gemm/gemm_mma_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

constexpr int64_t kMaxGridZ = 65535;  // gridDim.z limit
constexpr int64_t kMaxMmaWarps = 16;  // 512 threads: beyond, 128 registers a thread is the ceiling
constexpr int64_t kMaxMmaStages = 6;  // deeper pipelines only add shared memory on sm_80/sm_90
constexpr int64_t kMmaFinishThreads = 256;
// Enough 256-thread blocks to fill 132 SMs (H200) 8 times over; the kernels stride beyond that.
constexpr int64_t kMaxMmaFinishBlocks = 132 * 8 * 8;

using ops_detail::ceil_div;
using ops_detail::cpp_bool;
using ops_detail::is_pow2;
using ops_detail::u32;

KernelLaunch elementwise_launch(std::string expr, int64_t count) {
  KernelLaunch l;
  l.name_expression = std::move(expr);
  l.dims.grid = {u32(std::clamp<int64_t>(ceil_div(count, kMmaFinishThreads), 1, kMaxMmaFinishBlocks)), 1, 1};
  l.dims.block = {u32(kMmaFinishThreads), 1, 1};
  return l;
}

}  // namespace

std::string GemmForm::text() const {
  std::string out(gemm_layout_name(layout));
  if (bias) out += "+bias";
  if (silu) out += "+silu";
  return out;
}

std::optional<GemmForm> parse_gemm_form(std::string_view text) {
  GemmForm form;
  const auto plus = text.find('+');
  const auto layout = parse_gemm_layout(text.substr(0, plus));
  if (!layout) return std::nullopt;
  form.layout = *layout;
  std::string_view rest = plus == std::string_view::npos ? std::string_view{} : text.substr(plus);
  if (rest.starts_with("+bias")) {
    form.bias = true;
    rest.remove_prefix(5);
  }
  if (rest.starts_with("+silu")) {
    form.silu = true;
    rest.remove_prefix(5);
  }
  if (!rest.empty()) return std::nullopt;
  return form;
}

std::vector<std::string> MmaGemmSpec::param_names() const {
  return {"BLOCK_M", "BLOCK_N", "BLOCK_K",      "WARPS_M", "WARPS_N",
          "STAGES",  "SPLIT_K", "SPLIT_K_MODE", "SWIZZLE"};
}

int64_t MmaGemmSpec::shared_bytes(const Config& config) {
  constexpr int64_t kElemBytes = 2;  // f16 / bf16
  return config.at("STAGES") * (config.at("BLOCK_M") + config.at("BLOCK_N")) * config.at("BLOCK_K") *
         kElemBytes;
}

Problem MmaGemmSpec::base_problem(const Problem& problem, const GemmForm& form) {
  Problem p = problem;
  p.layout = std::string(gemm_layout_name(form.layout));
  return p;
}

std::optional<std::string> MmaGemmSpec::rejection(const Problem& problem, const Config& config) const {
  // SPLIT_K_MODE may be 0, which params_rejection's positivity rule refuses: check it apart.
  Config positive = config;
  if (const auto mode = config.find("SPLIT_K_MODE")) {
    if (*mode != 0 && *mode != 1)
      return fmt::format("SPLIT_K_MODE={} is neither 0 (deterministic) nor 1 (atomic)", *mode);
    positive.set("SPLIT_K_MODE", 1);
  }
  if (auto why = tile_rejection(problem, positive)) return why;
  if (config.at("SPLIT_K_MODE") == 1 && config.at("SPLIT_K") == 1)
    return "SPLIT_K_MODE=1 (atomic) needs SPLIT_K > 1";
  if (auto why = ops_detail::shared_memory_rejection(shared_bytes(config))) return why;
  return ops_detail::tile_grid_rejection(problem, config.at("BLOCK_M"), config.at("BLOCK_N"));
}

std::optional<std::string> MmaGemmSpec::tile_rejection(const Problem& problem, const Config& config) const {
  const auto form = parse_gemm_form(problem.layout);
  if (!form) {
    return fmt::format("gemm layout '{}' is not nt or nn with an optional +bias then +silu", problem.layout);
  }
  if (auto why = problem_rejection(base_problem(problem, *form))) return why;
  if (problem.dtype != DType::kF16 && problem.dtype != DType::kBF16) {
    return fmt::format("the {} template takes f16 and bf16, not {}", variant(),
                       ktune::to_string(problem.dtype));
  }
  if (auto why = params_rejection(config)) return why;
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t bk = config.at("BLOCK_K");
  const int64_t wm = config.at("WARPS_M");
  const int64_t wn = config.at("WARPS_N");
  const int64_t stages = config.at("STAGES");
  if (bm % (16 * wm) != 0) return fmt::format("BLOCK_M={} is not a multiple of 16*WARPS_M={}", bm, 16 * wm);
  if (bn % (16 * wn) != 0) return fmt::format("BLOCK_N={} is not a multiple of 16*WARPS_N={}", bn, 16 * wn);
  if (!is_pow2(bn) || bn < 16) return fmt::format("BLOCK_N={} is not a power of two >= 16", bn);
  if (!is_pow2(bk) || bk < 16 || bk > 128)
    return fmt::format("BLOCK_K={} is not a power of two in [16, 128]", bk);
  if (wm * wn > kMaxMmaWarps)
    return fmt::format("WARPS_M*WARPS_N={} exceeds {} warps", wm * wn, kMaxMmaWarps);
  if (stages < 2 || stages > kMaxMmaStages)
    return fmt::format("STAGES={} is outside [2, {}]", stages, kMaxMmaStages);
  if (config.at("SPLIT_K") > kMaxGridZ)
    return fmt::format("SPLIT_K={} exceeds {}", config.at("SPLIT_K"), kMaxGridZ);
  return std::nullopt;
}

std::string MmaGemmSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("gemm.{}.{}.mma.{}x{}x{}.w{}x{}.s{}.sk{}.a{}.g{}", ktune::to_string(problem.dtype),
                     form.text(), config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"),
                     config.at("WARPS_M"), config.at("WARPS_N"), config.at("STAGES"), config.at("SPLIT_K"),
                     config.at("SPLIT_K_MODE"), config.at("SWIZZLE"));
}

CompileSpec MmaGemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  const GemmForm form = *parse_gemm_form(problem.layout);
  const std::string_view type = ktune::cuda_type_name(problem.dtype);
  const int64_t split_k = config.at("SPLIT_K");
  const bool atomic = config.at("SPLIT_K_MODE") == 1;
  const bool epilogue = form.bias || form.silu;
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(
      fmt::format("ktune_gemm_mma<{},{},{},{},{},{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"),
                  config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"), config.at("WARPS_N"),
                  config.at("STAGES"), split_k, cpp_bool(atomic), config.at("SWIZZLE"), type,
                  cpp_bool(form.layout == GemmLayout::kNT), cpp_bool(form.bias), cpp_bool(form.silu)));
  if (split_k > 1) {
    if (atomic) c.name_expressions.push_back("ktune_gemm_mma_zero<float>");
    c.name_expressions.push_back(epilogue ? finish_name_expression(problem)
                                          : reduce_name_expression(problem.dtype));
  }
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan MmaGemmSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const GemmForm form = *parse_gemm_form(problem.layout);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t split_k = config.at("SPLIT_K");
  const bool atomic = config.at("SPLIT_K_MODE") == 1;
  LaunchPlan p;
  p.tensors = tensors(problem, split_k);
  if (atomic) p.tensors.back().elements = m * n;  // one f32 sum per element, not one per split
  if (form.bias) p.tensors.push_back({"bias", TensorRole::kInput, problem.dtype, n});
  const ArgSpec bias = form.bias ? ArgSpec::of_tensor("bias") : ArgSpec::null_pointer();

  if (atomic) {
    KernelLaunch zero = elementwise_launch(c.name_expressions.at(1), m * n);
    zero.args = {ArgSpec::of_tensor("workspace"), ArgSpec::i64(m * n)};
    p.launches.push_back(zero);
  }
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(m, config.at("BLOCK_M")) * ceil_div(n, config.at("BLOCK_N"))), 1, u32(split_k)};
  l.dims.block = {u32(config.at("WARPS_M") * config.at("WARPS_N") * 32), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(config));
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c"),
            split_k > 1 ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer(),
            bias,
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  for (ArgSpec& a : row_stride_args(problem)) l.args.push_back(std::move(a));
  p.launches.push_back(l);
  if (split_k > 1) {
    const int64_t slices = atomic ? 1 : split_k;
    if (form.bias || form.silu) {
      p.launches.push_back(finish_launch(problem, slices));
    } else {
      p.launches.push_back(reduce_launch(problem, slices));
    }
  }
  return p;
}

std::string MmaGemmSpec::finish_name_expression(const Problem& problem) {
  const GemmForm form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("ktune_gemm_mma_finish<{},{},{}>", ktune::cuda_type_name(problem.dtype),
                     form.bias ? "true" : "false", form.silu ? "true" : "false");
}

KernelLaunch MmaGemmSpec::finish_launch(const Problem& problem, int64_t slices) const {
  const GemmForm form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  KernelLaunch l;
  l.name_expression = finish_name_expression(problem);
  l.dims.grid = {u32(std::min(ceil_div(m * n, kMmaFinishThreads), kMaxMmaFinishBlocks)), 1, 1};
  l.dims.block = {u32(kMmaFinishThreads), 1, 1};
  l.args = {ArgSpec::of_tensor("workspace"),
            ArgSpec::of_tensor("c"),
            form.bias ? ArgSpec::of_tensor("bias") : ArgSpec::null_pointer(),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::row_stride("c", m, n),
            ArgSpec::i32(static_cast<int32_t>(slices))};
  return l;
}

WorkCounts MmaGemmSpec::work(const Problem& problem) const {
  WorkCounts w = GemmSpecBase::work(problem);
  const auto form = parse_gemm_form(problem.layout);
  if (form && form->bias) {
    w.min_bytes += static_cast<double>(problem.dim("n")) * static_cast<double>(ktune::size_of(problem.dtype));
  }
  return w;
}

std::vector<AlignmentRule> MmaGemmSpec::alignment(const Problem& problem, const Config&) const {
  const bool nt = parse_gemm_form(problem.layout).value_or(GemmForm{}).layout == GemmLayout::kNT;
  return {
      {"a", 16, false, "16-byte cp.async of A rows when A is 16-byte aligned and K, lda % 8 == 0"},
      {"b", 16, false,
       nt ? "16-byte cp.async of B rows when B is 16-byte aligned and K, ldb % 8 == 0"
          : "16-byte cp.async of B rows when B is 16-byte aligned and N, ldb % 8 == 0"},
      {"c", 4, false, "paired 4-byte stores of C when C is 4-byte aligned and ldc is even"},
  };
}

ReferenceSpec MmaGemmSpec::reference(const Problem& problem) const {
  const auto form = parse_gemm_form(problem.layout);
  if (!form) throw Error(ErrorKind::kBadInput, fmt::format("gemm layout '{}' is not valid", problem.layout));
  const Problem base = base_problem(problem, *form);
  ReferenceSpec r = GemmSpecBase::reference(base);
  if (!form->bias && !form->silu) return r;
  constexpr int64_t kTileX = 32;  // threads of a block along n (coalesced B reads for "nn")
  constexpr int64_t kTileY = 8;
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const std::string expr =
      fmt::format("ktune_gemm_reference_epilogue<{},{},{},{}>", ktune::cuda_type_name(problem.dtype),
                  cpp_bool(form->layout == GemmLayout::kNT), cpp_bool(form->bias), cpp_bool(form->silu));
  r.compile.source_name = "gemm_epilogue_reference.cu";
  r.compile.name_expressions = {expr};
  if (form->bias)
    r.plan.tensors.insert(r.plan.tensors.begin() + 2, {"bias", TensorRole::kInput, problem.dtype, n});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(n, kTileX)), u32(ceil_div(m, kTileY)), 1};
  l.dims.block = {u32(kTileX), u32(kTileY), 1};
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            form->bias ? ArgSpec::of_tensor("bias") : ArgSpec::null_pointer(),
            ArgSpec::of_tensor("c_ref"),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  r.plan.launches = {l};
  return r;
}

HostTensors MmaGemmSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  const auto form = parse_gemm_form(problem.layout);
  if (!form) throw Error(ErrorKind::kBadInput, fmt::format("gemm layout '{}' is not valid", problem.layout));
  HostTensors out = GemmSpecBase::cpu_reference(base_problem(problem, *form), inputs);
  if (!form->bias && !form->silu) return out;
  const auto bias = inputs.find("bias");
  const int64_t n = problem.dim("n");
  if (form->bias && (bias == inputs.end() || static_cast<int64_t>(bias->second.size()) != n)) {
    throw Error(ErrorKind::kBadInput, fmt::format("gemm cpu reference needs input 'bias' of {} values", n));
  }
  std::vector<double>& c = out.at("c");
  for (std::size_t i = 0; i < c.size(); ++i) {
    double v = c[i];
    if (form->bias) v += bias->second[i % static_cast<std::size_t>(n)];
    if (form->silu) v = v / (1.0 + std::exp(-v));
    c[i] = v;
  }
  return out;
}

Config MmaGemmSpec::default_config(const Problem&) const {
  return {"mma",
          {{"BLOCK_M", 64},
           {"BLOCK_N", 128},
           {"BLOCK_K", 32},
           {"WARPS_M", 2},
           {"WARPS_N", 2},
           {"STAGES", 3},
           {"SPLIT_K", 1},
           {"SPLIT_K_MODE", 0},
           {"SWIZZLE", 8}}};
}

std::vector<std::string> MmaGemmSpec::layouts() const {
  return {"nt", "nn", "nt+bias", "nn+bias", "nt+silu", "nn+silu", "nt+bias+silu", "nn+bias+silu"};
}

}  // namespace ktune::kernel_templates
