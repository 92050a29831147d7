#include "kernel_templates/gemm/gemm_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "kernel_templates/ops_spec_util.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

constexpr int64_t kMaxDim = std::numeric_limits<int32_t>::max();  // kernels index with int
constexpr int64_t kMaxGridYZ = 65535;                             // CUDA limit of gridDim.y and .z
constexpr int64_t kReduceThreads = 256;
// Enough 256-thread blocks to fill 132 SMs (H200) 8 times over; the kernel strides beyond that.
constexpr int64_t kMaxReduceBlocks = 132 * 8 * 8;

using ops_detail::ceil_div;
using ops_detail::u32;

}  // namespace

std::optional<GemmLayout> parse_gemm_layout(std::string_view text) {
  if (text.empty() || text == "nt") return GemmLayout::kNT;
  if (text == "nn") return GemmLayout::kNN;
  return std::nullopt;
}

std::string_view gemm_layout_name(GemmLayout layout) { return layout == GemmLayout::kNT ? "nt" : "nn"; }

WorkCounts GemmSpecBase::work(const Problem& problem) const {
  const double m = static_cast<double>(problem.dim("m"));
  const double n = static_cast<double>(problem.dim("n"));
  const double k = static_cast<double>(problem.dim("k"));
  const double bytes = static_cast<double>(ktune::size_of(problem.dtype));
  return {2.0 * m * n * k, (m * k + k * n + m * n) * bytes};
}

std::optional<std::string> GemmSpecBase::problem_rejection(const Problem& problem) const {
  for (const char* d : {"m", "n", "k"}) {
    const auto it =
        std::find_if(problem.dims.begin(), problem.dims.end(), [&](const auto& p) { return p.first == d; });
    if (it == problem.dims.end())
      return fmt::format("gemm needs dimension '{}' (shape '{}')", d, problem.shape_text());
    if (it->second < 1 || it->second > kMaxDim) {
      return fmt::format("gemm dimension {}={} is outside [1, {}]", d, it->second, kMaxDim);
    }
  }
  if (problem.dims.size() != 3)
    return fmt::format("gemm takes dimensions m, n, k; got '{}'", problem.shape_text());
  if (problem.dtype != DType::kF32 && problem.dtype != DType::kF16 && problem.dtype != DType::kBF16) {
    return fmt::format("gemm supports f32, f16, bf16, not {}", ktune::to_string(problem.dtype));
  }
  if (!parse_gemm_layout(problem.layout)) {
    return fmt::format("gemm layout '{}' is neither 'nt' nor 'nn'", problem.layout);
  }
  return std::nullopt;
}

std::optional<std::string> GemmSpecBase::params_rejection(const Config& config) const {
  if (config.variant != variant()) {
    return fmt::format("config variant '{}' is not '{}'", config.variant, variant());
  }
  for (const auto& name : param_names()) {
    const auto value = config.find(name);
    if (!value) return fmt::format("{} config lacks parameter {}", variant(), name);
    if (*value < 1) return fmt::format("{} must be positive, not {}", name, *value);
  }
  for (const auto& [name, value] : config.params) {
    const auto names = param_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return fmt::format("{} has no parameter {}", variant(), name);
    }
  }
  return std::nullopt;
}

void GemmSpecBase::require_accepted(const Problem& problem, const Config& config) const {
  if (auto why = rejection(problem, config)) throw Error(ErrorKind::kBadInput, *why);
}

std::vector<TensorSpec> GemmSpecBase::tensors(const Problem& problem, int64_t split_k) const {
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  std::vector<TensorSpec> t = {
      {"a", TensorRole::kInput, problem.dtype, m * k},
      {"b", TensorRole::kInput, problem.dtype, k * n},
      {"c", TensorRole::kOutput, problem.dtype, m * n},
  };
  if (split_k > 1) t.push_back({"workspace", TensorRole::kWorkspace, DType::kF32, split_k * m * n});
  return t;
}

std::string GemmSpecBase::reduce_name_expression(DType dtype) {
  return fmt::format("ktune_gemm_splitk_reduce<{}>", ktune::cuda_type_name(dtype));
}

std::vector<ArgSpec> GemmSpecBase::row_stride_args(const Problem& problem) {
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  // The layout text may carry an epilogue ("nn+bias"): B's layout is its first two letters.
  const bool nn = problem.layout.starts_with("nn");
  return {ArgSpec::row_stride("a", m, k),
          nn ? ArgSpec::row_stride("b", k, n) : ArgSpec::row_stride("b", n, k),
          ArgSpec::row_stride("c", m, n)};
}

KernelLaunch GemmSpecBase::reduce_launch(const Problem& problem, int64_t split_k) const {
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  KernelLaunch l;
  l.name_expression = reduce_name_expression(problem.dtype);
  l.dims.grid = {u32(std::min(ceil_div(m * n, kReduceThreads), kMaxReduceBlocks)), 1, 1};
  l.dims.block = {u32(kReduceThreads), 1, 1};
  l.args = {ArgSpec::of_tensor("workspace"),       ArgSpec::of_tensor("c"),
            ArgSpec::i32(static_cast<int32_t>(m)), ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::row_stride("c", m, n),        ArgSpec::i32(static_cast<int32_t>(split_k))};
  return l;
}

ReferenceSpec GemmSpecBase::reference(const Problem& problem) const {
  if (auto why = problem_rejection(problem)) throw Error(ErrorKind::kBadInput, *why);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const bool nt = *parse_gemm_layout(problem.layout) == GemmLayout::kNT;
  constexpr int64_t kTile = 16;  // gemm_reference.cu's tile
  ReferenceSpec r;
  r.compile.source_name = "gemm_reference.cu";
  const std::string expr =
      fmt::format("ktune_gemm_reference<{},{}>", ktune::cuda_type_name(problem.dtype), nt ? "true" : "false");
  r.compile.name_expressions = {expr};
  r.plan.tensors = {
      {"a", TensorRole::kInput, problem.dtype, m * k},
      {"b", TensorRole::kInput, problem.dtype, k * n},
      {"c_ref", TensorRole::kOutput, DType::kF32, m * n},
  };
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(n, kTile)), u32(ceil_div(m, kTile)), 1};
  l.dims.block = {u32(kTile), u32(kTile), 1};
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c_ref"),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  r.plan.launches = {l};
  r.compare = {{"c", "c_ref"}};
  return r;
}

HostTensors GemmSpecBase::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  if (auto why = problem_rejection(problem)) throw Error(ErrorKind::kBadInput, *why);
  const auto a = inputs.find("a");
  const auto b = inputs.find("b");
  if (a == inputs.end() || b == inputs.end()) {
    throw Error(ErrorKind::kBadInput, "gemm cpu reference needs input tensors 'a' and 'b'");
  }
  HostTensors out;
  out["c"] = gemm_reference_f64(a->second, b->second, problem.dim("m"), problem.dim("n"), problem.dim("k"),
                                *parse_gemm_layout(problem.layout));
  return out;
}

// ---- tiled -------------------------------------------------------------------------------------

std::vector<std::string> TiledGemmSpec::param_names() const {
  return {"BLOCK_M", "BLOCK_N", "BLOCK_K", "WARPS_M", "WARPS_N", "STAGES", "SPLIT_K"};
}

int64_t TiledGemmSpec::shared_bytes(DType dtype, const Config& config, GemmLayout layout) {
  const int64_t elem = static_cast<int64_t>(ktune::size_of(dtype));
  const int64_t pad = 16 / elem;
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t bk = config.at("BLOCK_K");
  const int64_t a_tile = bm * (bk + pad);
  const int64_t b_tile = layout == GemmLayout::kNT ? bn * (bk + pad) : bk * (bn + pad);
  return config.at("STAGES") * (a_tile + b_tile) * elem;
}

std::optional<std::string> TiledGemmSpec::rejection(const Problem& problem, const Config& config) const {
  if (auto why = problem_rejection(problem)) return why;
  if (auto why = params_rejection(config)) return why;
  const int64_t bm = config.at("BLOCK_M");
  const int64_t bn = config.at("BLOCK_N");
  const int64_t bk = config.at("BLOCK_K");
  const int64_t wm = config.at("WARPS_M");
  const int64_t wn = config.at("WARPS_N");
  const int64_t vec = 16 / static_cast<int64_t>(ktune::size_of(problem.dtype));
  if (bm % (4 * wm) != 0) return fmt::format("BLOCK_M={} is not a multiple of 4*WARPS_M={}", bm, 4 * wm);
  if (bn % (8 * wn) != 0) return fmt::format("BLOCK_N={} is not a multiple of 8*WARPS_N={}", bn, 8 * wn);
  if (bk % vec != 0) {
    return fmt::format("BLOCK_K={} is not a multiple of {} ({} elements are 16 bytes)", bk, vec,
                       ktune::to_string(problem.dtype));
  }
  if (wm * wn > 32) return fmt::format("WARPS_M*WARPS_N={} exceeds 32 warps (1024 threads)", wm * wn);
  if (config.at("STAGES") < 2) return fmt::format("STAGES={} is below 2", config.at("STAGES"));
  if (config.at("SPLIT_K") > kMaxGridYZ)
    return fmt::format("SPLIT_K={} exceeds {}", config.at("SPLIT_K"), kMaxGridYZ);
  if (ceil_div(problem.dim("m"), bm) > kMaxGridYZ) {
    return fmt::format("m={} needs more than {} blocks of BLOCK_M={}", problem.dim("m"), kMaxGridYZ, bm);
  }
  return std::nullopt;
}

std::string TiledGemmSpec::canonical_name(const Problem& problem, const Config& config) const {
  const auto layout = parse_gemm_layout(problem.layout).value_or(GemmLayout::kNT);
  return fmt::format("gemm.{}.{}.{}x{}x{}.w{}x{}.s{}.sk{}", ktune::to_string(problem.dtype),
                     gemm_layout_name(layout), config.at("BLOCK_M"), config.at("BLOCK_N"),
                     config.at("BLOCK_K"), config.at("WARPS_M"), config.at("WARPS_N"), config.at("STAGES"),
                     config.at("SPLIT_K"));
}

CompileSpec TiledGemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  const bool nt = *parse_gemm_layout(problem.layout) == GemmLayout::kNT;
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(
      fmt::format("ktune_gemm_tiled<{},{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"), config.at("BLOCK_N"),
                  config.at("BLOCK_K"), config.at("WARPS_M"), config.at("WARPS_N"), config.at("STAGES"),
                  config.at("SPLIT_K"), ktune::cuda_type_name(problem.dtype), nt ? "true" : "false"));
  if (config.at("SPLIT_K") > 1) c.name_expressions.push_back(reduce_name_expression(problem.dtype));
  c.options = {"-std=c++17"};
  return c;
}

LaunchPlan TiledGemmSpec::launch_plan(const Problem& problem, const Config& config) const {
  const CompileSpec c = compile_spec(problem, config);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  const int64_t split_k = config.at("SPLIT_K");
  LaunchPlan p;
  p.tensors = tensors(problem, split_k);
  KernelLaunch l;
  l.name_expression = c.name_expressions.front();
  l.dims.grid = {u32(ceil_div(n, config.at("BLOCK_N"))), u32(ceil_div(m, config.at("BLOCK_M"))),
                 u32(split_k)};
  l.dims.block = {u32(config.at("WARPS_M") * config.at("WARPS_N") * 32), 1, 1};
  l.dims.dynamic_smem_bytes = u32(shared_bytes(problem.dtype, config, *parse_gemm_layout(problem.layout)));
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c"),
            split_k > 1 ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer(),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  for (ArgSpec& a : row_stride_args(problem)) l.args.push_back(std::move(a));
  p.launches.push_back(l);
  if (split_k > 1) p.launches.push_back(reduce_launch(problem, split_k));
  return p;
}

std::vector<AlignmentRule> TiledGemmSpec::alignment(const Problem& problem, const Config&) const {
  const bool nt = parse_gemm_layout(problem.layout).value_or(GemmLayout::kNT) == GemmLayout::kNT;
  return {
      {"a", 16, false,
       "16-byte cp.async of A rows when A is 16-byte aligned and K*sizeof(T), lda*sizeof(T) % 16 == 0"},
      {"b", 16, false,
       nt ? "16-byte cp.async of B rows when B is 16-byte aligned and K*sizeof(T), ldb*sizeof(T) % 16 == 0"
          : "16-byte cp.async of B rows when B is 16-byte aligned and N*sizeof(T), ldb*sizeof(T) % 16 == 0"},
  };
}

Config TiledGemmSpec::default_config(const Problem&) const {
  return {"tiled",
          {{"BLOCK_M", 64},
           {"BLOCK_N", 64},
           {"BLOCK_K", 32},
           {"WARPS_M", 2},
           {"WARPS_N", 2},
           {"STAGES", 3},
           {"SPLIT_K", 1}}};
}

}  // namespace ktune::kernel_templates
