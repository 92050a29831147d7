#include "kernel_templates/gemm/gemm_spec.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
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
using ops_detail::cpp_bool;
using ops_detail::u32;

}  // namespace

std::optional<GemmLayout> parse_gemm_layout(std::string_view text) {
  if (text.empty() || text == "nt") return GemmLayout::kNT;
  if (text == "nn") return GemmLayout::kNN;
  return std::nullopt;
}

std::string_view gemm_layout_name(GemmLayout layout) { return layout == GemmLayout::kNT ? "nt" : "nn"; }

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

std::vector<std::string> all_gemm_forms() {
  return {"nt", "nn", "nt+bias", "nn+bias", "nt+silu", "nn+silu", "nt+bias+silu", "nn+bias+silu"};
}

WorkCounts GemmSpecBase::work(const Problem& problem) const {
  const double m = static_cast<double>(problem.dim("m"));
  const double n = static_cast<double>(problem.dim("n"));
  const double k = static_cast<double>(problem.dim("k"));
  const double bytes = static_cast<double>(ktune::size_of(problem.dtype));
  const bool bias = parse_gemm_form(problem.layout).value_or(GemmForm{}).bias;
  return {2.0 * m * n * k, (m * k + k * n + m * n + (bias ? n : 0.0)) * bytes};
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
  const std::optional<GemmForm> parsed = parse_gemm_form(problem.layout);
  if (!parsed) {
    return fmt::format("gemm layout '{}' is not nt or nn with an optional +bias then +silu", problem.layout);
  }
  const std::vector<std::string> served = layouts();
  const std::string form = parsed->text();
  if (std::find(served.begin(), served.end(), form) == served.end()) {
    return fmt::format("the {} template serves the layouts {}, not '{}'", variant(), fmt::join(served, ", "),
                       problem.layout);
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
  if (parse_gemm_form(problem.layout).value_or(GemmForm{}).bias)
    t.push_back({"bias", TensorRole::kInput, problem.dtype, n});
  return t;
}

ArgSpec GemmSpecBase::bias_arg(const Problem& problem) {
  return parse_gemm_form(problem.layout).value_or(GemmForm{}).bias ? ArgSpec::of_tensor("bias")
                                                                   : ArgSpec::null_pointer();
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

std::string GemmSpecBase::finish_name_expression(const Problem& problem) {
  const GemmForm form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("ktune_gemm_finish<{},{},{}>", ktune::cuda_type_name(problem.dtype),
                     form.bias ? "true" : "false", form.silu ? "true" : "false");
}

std::string GemmSpecBase::split_k_finish_name_expression(const Problem& problem) {
  return parse_gemm_form(problem.layout).value_or(GemmForm{}).has_epilogue()
             ? finish_name_expression(problem)
             : reduce_name_expression(problem.dtype);
}

KernelLaunch GemmSpecBase::split_k_finish_launch(const Problem& problem, int64_t slices) const {
  if (!parse_gemm_form(problem.layout).value_or(GemmForm{}).has_epilogue())
    return reduce_launch(problem, slices);
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  KernelLaunch l;
  l.name_expression = finish_name_expression(problem);
  l.dims.grid = {u32(std::min(ceil_div(m * n, kReduceThreads), kMaxReduceBlocks)), 1, 1};
  l.dims.block = {u32(kReduceThreads), 1, 1};
  l.args = {ArgSpec::of_tensor("workspace"),
            ArgSpec::of_tensor("c"),
            bias_arg(problem),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::row_stride("c", m, n),
            ArgSpec::i32(static_cast<int32_t>(slices))};
  return l;
}

ReferenceSpec GemmSpecBase::reference(const Problem& problem) const {
  if (auto why = problem_rejection(problem)) throw Error(ErrorKind::kBadInput, *why);
  const GemmForm form = *parse_gemm_form(problem.layout);
  const char* const nt = form.layout == GemmLayout::kNT ? "true" : "false";
  if (!form.has_epilogue()) {
    // gemm_reference.cu: 16 x 16 threads a block.
    return one_launch_reference(
        problem, form, "gemm_reference.cu",
        fmt::format("ktune_gemm_reference<{},{}>", ktune::cuda_type_name(problem.dtype), nt), 16, 16);
  }
  // gemm_epilogue_reference.cu: 32 threads along n (coalesced B reads for "nn") x 8.
  return one_launch_reference(
      problem, form, "gemm_epilogue_reference.cu",
      fmt::format("ktune_gemm_reference_epilogue<{},{},{},{}>", ktune::cuda_type_name(problem.dtype), nt,
                  form.bias ? "true" : "false", form.silu ? "true" : "false"),
      32, 8);
}

ReferenceSpec GemmSpecBase::one_launch_reference(const Problem& problem, const GemmForm& form,
                                                 const char* source, const std::string& expr, int64_t tile_x,
                                                 int64_t tile_y) {
  const int64_t m = problem.dim("m");
  const int64_t n = problem.dim("n");
  const int64_t k = problem.dim("k");
  ReferenceSpec r;
  r.compile.source_name = source;
  r.compile.name_expressions = {expr};
  r.plan.tensors = {{"a", TensorRole::kInput, problem.dtype, m * k},
                    {"b", TensorRole::kInput, problem.dtype, k * n}};
  if (form.bias) r.plan.tensors.push_back({"bias", TensorRole::kInput, problem.dtype, n});
  r.plan.tensors.push_back({"c_ref", TensorRole::kOutput, DType::kF32, m * n});
  KernelLaunch l;
  l.name_expression = expr;
  l.dims.grid = {u32(ceil_div(n, tile_x)), u32(ceil_div(m, tile_y)), 1};
  l.dims.block = {u32(tile_x), u32(tile_y), 1};
  l.args = {ArgSpec::of_tensor("a"), ArgSpec::of_tensor("b")};
  if (form.has_epilogue()) l.args.push_back(bias_arg(problem));  // the epilogue reference's bias pointer
  for (ArgSpec a : {ArgSpec::of_tensor("c_ref"), ArgSpec::i32(static_cast<int32_t>(m)),
                    ArgSpec::i32(static_cast<int32_t>(n)), ArgSpec::i32(static_cast<int32_t>(k))})
    l.args.push_back(std::move(a));
  r.plan.launches = {l};
  r.compare = {{"c", "c_ref"}};
  return r;
}

HostTensors GemmSpecBase::cpu_reference(const Problem& problem, const HostTensors& inputs) const {
  if (auto why = problem_rejection(problem)) throw Error(ErrorKind::kBadInput, *why);
  const GemmForm form = *parse_gemm_form(problem.layout);
  const auto a = inputs.find("a");
  const auto b = inputs.find("b");
  if (a == inputs.end() || b == inputs.end()) {
    throw Error(ErrorKind::kBadInput, "gemm cpu reference needs input tensors 'a' and 'b'");
  }
  const int64_t n = problem.dim("n");
  const auto bias = inputs.find("bias");
  if (form.bias && (bias == inputs.end() || static_cast<int64_t>(bias->second.size()) != n)) {
    throw Error(ErrorKind::kBadInput, fmt::format("gemm cpu reference needs input 'bias' of {} values", n));
  }
  HostTensors out;
  std::vector<double>& c = out["c"];
  c = gemm_reference_f64(a->second, b->second, problem.dim("m"), n, problem.dim("k"), form.layout);
  if (!form.has_epilogue()) return out;
  for (std::size_t i = 0; i < c.size(); ++i) {
    double v = c[i];
    if (form.bias) v += bias->second[i % static_cast<std::size_t>(n)];
    if (form.silu) v = v / (1.0 + std::exp(-v));
    c[i] = v;
  }
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
  const GemmForm form = parse_gemm_form(problem.layout).value_or(GemmForm{});
  return fmt::format("gemm.{}.{}.{}x{}x{}.w{}x{}.s{}.sk{}", ktune::to_string(problem.dtype), form.text(),
                     config.at("BLOCK_M"), config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"),
                     config.at("WARPS_N"), config.at("STAGES"), config.at("SPLIT_K"));
}

CompileSpec TiledGemmSpec::compile_spec(const Problem& problem, const Config& config) const {
  require_accepted(problem, config);
  const GemmForm form = *parse_gemm_form(problem.layout);
  CompileSpec c;
  c.source_name = std::string(source_name());
  c.name_expressions.push_back(
      fmt::format("ktune_gemm_tiled<{},{},{},{},{},{},{},{},{},{},{}>", config.at("BLOCK_M"),
                  config.at("BLOCK_N"), config.at("BLOCK_K"), config.at("WARPS_M"), config.at("WARPS_N"),
                  config.at("STAGES"), config.at("SPLIT_K"), ktune::cuda_type_name(problem.dtype),
                  cpp_bool(form.layout == GemmLayout::kNT), cpp_bool(form.bias), cpp_bool(form.silu)));
  if (config.at("SPLIT_K") > 1) c.name_expressions.push_back(split_k_finish_name_expression(problem));
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
  l.dims.dynamic_smem_bytes =
      u32(shared_bytes(problem.dtype, config, parse_gemm_form(problem.layout)->layout));
  l.args = {ArgSpec::of_tensor("a"),
            ArgSpec::of_tensor("b"),
            ArgSpec::of_tensor("c"),
            split_k > 1 ? ArgSpec::of_tensor("workspace") : ArgSpec::null_pointer(),
            bias_arg(problem),
            ArgSpec::i32(static_cast<int32_t>(m)),
            ArgSpec::i32(static_cast<int32_t>(n)),
            ArgSpec::i32(static_cast<int32_t>(k))};
  for (ArgSpec& a : row_stride_args(problem)) l.args.push_back(std::move(a));
  p.launches.push_back(l);
  if (split_k > 1) p.launches.push_back(split_k_finish_launch(problem, split_k));
  return p;
}

std::vector<AlignmentRule> TiledGemmSpec::alignment(const Problem& problem, const Config&) const {
  const bool nt = parse_gemm_form(problem.layout).value_or(GemmForm{}).layout == GemmLayout::kNT;
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
