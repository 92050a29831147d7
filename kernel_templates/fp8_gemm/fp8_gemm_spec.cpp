#include "kernel_templates/fp8_gemm/fp8_gemm_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "kernel_templates/fp8_gemm/reference_fp8_gemm.hpp"
#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

using ops_detail::ceil_div;
using ops_detail::is_pow2;
using ops_detail::u32;

constexpr int64_t kMaxFp8GridY = 65535;  // gridDim.y / .z limit
constexpr int64_t kMaxFp8Warps = 16;     // 512 threads: beyond, 128 registers a thread is the ceiling
constexpr int64_t kMaxFp8Stages = 6;     // deeper pipelines only add shared memory on sm_89/sm_90
constexpr int64_t kFp8MinArch = 89;      // mma.sync m16n8k32 .e4m3 (PTX ISA 8.4)
constexpr int64_t kRefTile = 16;         // fp8_gemm_reference.cu's 16 x 16 blocks
constexpr int64_t kFp8FinishThreads = 256;
// Enough 256-thread blocks to fill 132 SMs (H200) 8 times over; the kernel strides beyond that.
constexpr int64_t kMaxFp8FinishBlocks = 132 * 8 * 8;

using ops_detail::cpp_bool;

std::vector<TensorSpec> fp8_input_tensors(const Problem& p, bool rowcol) {
  const int64_t m = p.dim("m");
  const int64_t n = p.dim("n");
  const int64_t k = p.dim("k");
  return {{"a", TensorRole::kInput, DType::kFP8E4M3, m * k},
          {"b", TensorRole::kInput, DType::kFP8E4M3, n * k},
          {"a_scale", TensorRole::kInput, DType::kF32, rowcol ? m : 1},
          {"b_scale", TensorRole::kInput, DType::kF32, rowcol ? n : 1}};
}

}  // namespace

std::vector<TensorSpec> Fp8GemmSpec::tensors(const Problem& problem) {
  std::vector<TensorSpec> out = fp8_input_tensors(problem, rowcol(problem));
  out.push_back({"c", TensorRole::kOutput, DType::kBF16, problem.dim("m") * problem.dim("n")});
  return out;
}

std::vector<std::string> Fp8GemmSpec::param_names() const {
  return {"BLOCK_M", "BLOCK_N", "BLOCK_K", "WARPS_M", "WARPS_N", "STAGES", "SPLIT_K", "SWIZZLE"};
}

bool Fp8GemmSpec::rowcol(const Problem& problem) {
  if (problem.layout.empty() || problem.layout == "nt") return false;
  if (problem.layout == "nt+rowcol") return true;
  throw Error(
      ErrorKind::kBadInput,
      fmt::format(
          "fp8_gemm layout '{}' is neither 'nt' nor 'nt+rowcol'{}", problem.layout,
          problem.layout.starts_with("nn") ? " (B must be [N,K]: ldmatrix cannot transpose bytes)" : ""));
}

std::optional<std::string> Fp8GemmSpec::arch_rejection(std::string_view arch) const {
  return rejection_for_arch(arch);
}

std::optional<std::string> Fp8GemmSpec::rejection_for_arch(std::string_view arch) {
  const std::optional<int64_t> cc = ops_detail::arch_number(arch);
  if (!cc) return fmt::format("'{}' is not an arch such as sm_90", arch);
  if (*cc < kFp8MinArch) {
    return fmt::format("fp8_gemm needs sm_89 or newer (mma.sync m16n8k32 e4m3); {} has no fp8 tensor cores",
                       arch);
  }
  return std::nullopt;
}

int64_t Fp8GemmSpec::shared_bytes(const Config& config) {
  return config.at("STAGES") * (config.at("BLOCK_M") + config.at("BLOCK_N")) * config.at("BLOCK_K");
}

std::optional<std::string> Fp8GemmSpec::problem_rejection(const Problem& problem) const {
  if (auto why = ops_detail::dims_rejection(kernel(), problem, dims())) return why;
  if (problem.dtype != DType::kFP8E4M3) {
    return fmt::format("fp8_gemm takes fp8e4m3 inputs, not {}", ktune::to_string(problem.dtype));
  }
  try {
    rowcol(problem);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  const int64_t k = problem.dim("k");
  if (k % kKMultiple != 0) {
    return fmt::format("fp8_gemm needs K a multiple of {} (16-byte rows of e4m3 for cp.async), not K={}",
                       kKMultiple, k);
  }
  if (ceil_div(problem.dim("m"), kRefTile) > kMaxFp8GridY) {
    return fmt::format("fp8_gemm serves m <= {} (its reference's grid.y), not {}", kMaxFp8GridY * kRefTile,
                       problem.dim("m"));
  }
  return std::nullopt;
}

std::optional<std::string> Fp8GemmSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = ops_detail::params_rejection(variant(), config, param_names())) return why;
  for (const auto& [name, value] : config.params) {
    if (value < 1) return fmt::format("{} must be positive, not {}", name, value);
  }
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t bk = config.at("BLOCK_K");
  const int64_t wm = config.at("WARPS_M");
  const int64_t wn = config.at("WARPS_N");
  const int64_t stages = config.at("STAGES");
  const int64_t split_k = config.at("SPLIT_K");
  if (bm % (16 * wm) != 0) return fmt::format("BLOCK_M={} is not a multiple of 16*WARPS_M={}", bm, 16 * wm);
  if (bn % (16 * wn) != 0) return fmt::format("BLOCK_N={} is not a multiple of 16*WARPS_N={}", bn, 16 * wn);
  if (!is_pow2(bk) || bk < 32 || bk > 256)
    return fmt::format("BLOCK_K={} is not a power of two in [32, 256]", bk);
  if (wm * wn > kMaxFp8Warps)
    return fmt::format("WARPS_M*WARPS_N={} exceeds {} warps", wm * wn, kMaxFp8Warps);
  if (stages < 2 || stages > kMaxFp8Stages)
    return fmt::format("STAGES={} is outside [2, {}]", stages, kMaxFp8Stages);
  if (split_k > kMaxFp8GridY) return fmt::format("SPLIT_K={} exceeds {}", split_k, kMaxFp8GridY);
  if (auto why = ops_detail::shared_memory_rejection(shared_bytes(config))) return why;
  return ops_detail::tile_grid_rejection(problem, bm, bn);
}

std::string Fp8GemmSpec::canonical_name(const Problem& problem, const Config& config) const {
  const std::string layout = problem.layout.empty() ? "nt" : problem.layout;
  return fmt::format("fp8_gemm.{}.{}.{}x{}x{}.w{}x{}.s{}.sk{}.g{}", ktune::to_string(problem.dtype), layout,
                     config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"),
                     config.at("WARPS_N"), config.at("STAGES"), config.at("SPLIT_K"), config.at("SWIZZLE"));
}

CompileSpec Fp8GemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  ops_detail::throw_if(rejection(problem, config));
  const bool rc = rowcol(problem);
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(fmt::format("ktune_fp8_gemm<{},{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"),
                                           config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"),
                                           config.at("WARPS_N"), config.at("STAGES"), config.at("SPLIT_K"),
                                           config.at("SWIZZLE"), cpp_bool(rc)));
  if (config.at("SPLIT_K") > 1)
    c.name_expressions.push_back(fmt::format("ktune_fp8_gemm_finish<{}>", cpp_bool(rc)));
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan Fp8GemmSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t split_k = config.at("SPLIT_K");
  LaunchPlan p;
  p.tensors = tensors(problem);
  if (split_k > 1) p.tensors.push_back({"workspace", TensorRole::kWorkspace, DType::kF32, split_k * m * n});

  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(m, config.at("BLOCK_M")) * ceil_div(n, config.at("BLOCK_N"))), 1, u32(split_k)};
  l.dims.block = {u32(config.at("WARPS_M") * config.at("WARPS_N") * 32), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(config));
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("a_scale"),
            ArgSpec::of_tensor("b_scale"),
            ArgSpec::of_tensor("c"),
            split_k > 1 ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer(),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  p.launches.push_back(l);
  if (split_k > 1) {
    KernelLaunch finish;
    finish.name_expression = c.name_expressions.back();
    finish.dims.grid = {u32(std::clamp<int64_t>(ceil_div(m * n, kFp8FinishThreads), 1, kMaxFp8FinishBlocks)),
                        1, 1};
    finish.dims.block = {u32(kFp8FinishThreads), 1, 1};
    finish.args = {ArgSpec::of_tensor("workspace"),
                   ArgSpec::of_tensor("c"),
                   ArgSpec::of_tensor("a_scale"),
                   ArgSpec::of_tensor("b_scale"),
                   ArgSpec::i64(m * n),
                   ArgSpec::i32(static_cast<int32_t>(n)),
                   ArgSpec::i32(static_cast<int32_t>(split_k))};
    p.launches.push_back(finish);
  }
  return p;
}

WorkCounts Fp8GemmSpec::work(const Problem& problem) const {
  const auto m = static_cast<double>(problem.dim("m"));
  const auto n = static_cast<double>(problem.dim("n"));
  const auto k = static_cast<double>(problem.dim("k"));
  const bool rc = rowcol(problem);
  constexpr double kScaleBytes = 4;  // f32
  constexpr double kOutBytes = 2;    // bf16
  return {2 * m * n * k, m * k + n * k + kScaleBytes * (rc ? m + n : 2) + kOutBytes * m * n};
}

std::vector<AlignmentRule> Fp8GemmSpec::alignment(const Problem&, const Config&) const {
  return {
      {"a", 16, true, "every A load is a 16-byte cp.async (K % 16 == 0 keeps each row aligned)"},
      {"b", 16, true, "every B load is a 16-byte cp.async (K % 16 == 0 keeps each row aligned)"},
      {"a_scale", 4, true, "f32 scale loads"},
      {"b_scale", 4, true, "f32 scale loads"},
      {"c", 4, false, "paired 4-byte bf16 stores when C is 4-byte aligned and N is even"},
  };
}

ReferenceSpec Fp8GemmSpec::reference(const Problem& problem) const {
  if (auto why = problem_rejection(problem)) throw Error(ErrorKind::kBadInput, *why);
  const bool rc = rowcol(problem);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const std::string expr = fmt::format("ktune_fp8_gemm_reference<{}>", cpp_bool(rc));
  ReferenceSpec r;
  r.compile.source_name = "fp8_gemm_reference.cu";
  r.compile.name_expressions = {expr};
  r.compile.options = {"-std=c++17"};
  r.plan.tensors = fp8_input_tensors(problem, rc);
  r.plan.tensors.push_back({"c_ref", TensorRole::kOutput, DType::kF32, m * n});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(n, kRefTile)), u32(ceil_div(m, kRefTile)), 1};
  l.dims.block = {u32(kRefTile), u32(kRefTile), 1};
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("a_scale"),
            ArgSpec::of_tensor("b_scale"),
            ArgSpec::of_tensor("c_ref"),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  r.plan.launches = {l};
  r.compare = {{"c", "c_ref"}};
  return r;
}

HostTensors Fp8GemmSpec::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  const bool rc = rowcol(problem);
  const auto get = [&](const char* name) -> const std::vector<double>& {
    const auto it = inputs.find(name);
    if (it == inputs.end()) {
      throw Error(ErrorKind::kBadInput, fmt::format("fp8_gemm cpu reference needs input '{}'", name));
    }
    return it->second;
  };
  HostTensors out;
  out["c"] = fp8_gemm_reference_f64(get("a"), get("b"), get("a_scale"), get("b_scale"), problem.dim("m"),
                                    problem.dim("n"), problem.dim("k"), rc);
  return out;
}

Config Fp8GemmSpec::default_config(const Problem&) const {
  return {"mma",
          {{"BLOCK_M", 64},
           {"BLOCK_N", 128},
           {"BLOCK_K", 64},
           {"WARPS_M", 2},
           {"WARPS_N", 2},
           {"STAGES", 3},
           {"SPLIT_K", 1},
           {"SWIZZLE", 8}}};
}

std::vector<std::string> Fp8GemmSpec::layouts() const { return {"nt", "nt+rowcol"}; }

}  // namespace ktune::kernel_templates
