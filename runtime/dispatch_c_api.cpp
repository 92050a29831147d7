/// The C dispatch ABI (include/ktune/ktune_runtime.h) over ktune::Runtime: each entry point checks
/// its C arguments (NULL structs, enum values), converts the args struct field by field into the
/// C++ one and calls the runtime inside core/c_abi_guard.hpp's guard, so no exception reaches C.

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/c_abi_guard.hpp"
#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "ktune/ktune.hpp"
#include "ktune/ktune_runtime.h"
#include "ktune/version.h"

struct ktune_runtime {
  ktune::Runtime runtime;
};

namespace {

thread_local std::string t_last_error;

template <typename Body>
int guarded(Body&& body) noexcept {
  return ktune::c_abi::guarded(t_last_error, std::forward<Body>(body));
}

[[noreturn]] void bad(const std::string& message) {
  throw ktune::Error(ktune::ErrorKind::kBadInput, message);
}

/// `value` as an enum with `count` values (0 .. count-1), or kBadInput naming the field.
template <typename Enum>
Enum enum_of(int value, int count, const char* field) {
  if (value < 0 || value >= count) bad(fmt::format("{}={} is not one of 0..{}", field, value, count - 1));
  return static_cast<Enum>(value);
}

ktune::DType dtype_of(int v) { return enum_of<ktune::DType>(v, 4, "dtype"); }

template <typename Args>
const Args& require(const Args* args, const char* function) {
  if (args == nullptr) bad(fmt::format("{}: args is NULL", function));
  return *args;
}

ktune::Runtime& require(ktune_runtime* rt, const char* function) {
  if (rt == nullptr) bad(fmt::format("{}: rt is NULL", function));
  return rt->runtime;
}

ktune::Workspace workspace_of(void* ptr, std::size_t bytes) { return {ptr, bytes}; }

ktune::GemmArgs convert(const ktune_gemm_args& a) {
  return {.a = a.a,
          .b = a.b,
          .c = a.c,
          .bias = a.bias,
          .m = a.m,
          .n = a.n,
          .k = a.k,
          .lda = a.lda,
          .ldb = a.ldb,
          .ldc = a.ldc,
          .dtype = dtype_of(a.dtype),
          .layout = enum_of<ktune::Layout>(a.layout, 2, "layout"),
          .epilogue = enum_of<ktune::Epilogue>(a.epilogue, 4, "epilogue"),
          .workspace = workspace_of(a.workspace, a.workspace_bytes)};
}

ktune::RmsNormArgs convert(const ktune_rmsnorm_args& a) {
  return {.x = a.x,
          .residual = a.residual,
          .w = a.w,
          .y = a.y,
          .residual_out = a.residual_out,
          .rows = a.rows,
          .hidden = a.hidden,
          .eps = a.eps,
          .dtype = dtype_of(a.dtype)};
}

ktune::RmsNormRopeArgs convert(const ktune_rmsnorm_rope_args& a) {
  return {.q = a.q,
          .k = a.k,
          .q_weight = a.q_weight,
          .k_weight = a.k_weight,
          .cos_sin = a.cos_sin,
          .positions = a.positions,
          .q_out = a.q_out,
          .k_out = a.k_out,
          .tokens = a.tokens,
          .heads_q = a.heads_q,
          .heads_kv = a.heads_kv,
          .head_dim = a.head_dim,
          .max_pos = a.max_pos,
          .eps = a.eps,
          .style = enum_of<ktune::RopeStyle>(a.style, 2, "style"),
          .dtype = dtype_of(a.dtype)};
}

ktune::RopeAppendArgs convert(const ktune_rope_append_args& a) {
  return {.q = a.q,
          .k = a.k,
          .v = a.v,
          .q_weight = a.q_weight,
          .k_weight = a.k_weight,
          .cos_sin = a.cos_sin,
          .positions = a.positions,
          .block_table = a.block_table,
          .q_out = a.q_out,
          .k_cache = a.k_cache,
          .v_cache = a.v_cache,
          .tokens = a.tokens,
          .heads_q = a.heads_q,
          .heads_kv = a.heads_kv,
          .head_dim = a.head_dim,
          .rot_dim = a.rot_dim,
          .seq_tokens = a.seq_tokens,
          .cache_rows = a.cache_rows,
          .max_blocks = a.max_blocks,
          .num_blocks = a.num_blocks,
          .max_pos = a.max_pos,
          .eps = a.eps,
          .style = enum_of<ktune::RopeStyle>(a.style, 2, "style"),
          .dtype = dtype_of(a.dtype)};
}

ktune::SoftmaxArgs convert(const ktune_softmax_args& a) {
  return {.x = a.x,
          .y = a.y,
          .lengths = a.lengths,
          .rows = a.rows,
          .cols = a.cols,
          .scale = a.scale,
          .mask = enum_of<ktune::SoftmaxMask>(a.mask, 3, "mask"),
          .dtype = dtype_of(a.dtype),
          .workspace = workspace_of(a.workspace, a.workspace_bytes)};
}

ktune::SwigluArgs convert(const ktune_swiglu_args& a) {
  return {.x = a.x, .gate = a.gate, .up = a.up, .out = a.out, .m = a.m, .i = a.i, .dtype = dtype_of(a.dtype)};
}

ktune::DecodeAttentionArgs convert(const ktune_decode_attention_args& a) {
  return {.q = a.q,
          .k = a.k,
          .v = a.v,
          .o = a.o,
          .context_lens = a.context_lens,
          .batch = a.batch,
          .heads_q = a.heads_q,
          .heads_kv = a.heads_kv,
          .seq = a.seq,
          .seq_max = a.seq_max,
          .head_dim = a.head_dim,
          .scale = a.scale,
          .dtype = dtype_of(a.dtype),
          .workspace = workspace_of(a.workspace, a.workspace_bytes),
          .block_table = a.block_table,
          .block_size = a.block_size,
          .max_blocks = a.max_blocks,
          .num_blocks = a.num_blocks};
}

ktune::Fp8GemmArgs convert(const ktune_fp8_gemm_args& a) {
  return {.a = a.a,
          .b = a.b,
          .a_scale = a.a_scale,
          .b_scale = a.b_scale,
          .c = a.c,
          .m = a.m,
          .n = a.n,
          .k = a.k,
          .scaling = enum_of<ktune::Fp8Scaling>(a.scaling, 2, "scaling"),
          .workspace = workspace_of(a.workspace, a.workspace_bytes)};
}

template <std::size_t N>
void copy_cut(char (&out)[N], const std::string& text) {
  const std::size_t n = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

void fill(ktune_plan_info* out, const ktune::PlanInfo& info) {
  if (out == nullptr) return;
  *out = ktune_plan_info{};
  out->source = static_cast<int>(info.source);
  copy_cut(out->config_name, info.config_name);
  copy_cut(out->tuned_shape, info.tuned_shape);
  out->tuned_median_us = info.tuned_median_us;
  out->launches = info.launches;
  out->workspace_bytes = info.workspace_bytes;
}

template <typename CArgs>
int prepare(ktune_runtime* rt, const CArgs* args, ktune_plan_info* info, const char* function) {
  return guarded([&] {
    ktune::Runtime& r = require(rt, function);
    fill(info, r.prepare(convert(require(args, function))));
    return KTUNE_OK;
  });
}

template <typename CArgs, typename Launch>
int launch(ktune_runtime* rt, const CArgs* args, void* stream, const char* function, Launch member) {
  return guarded([&] {
    ktune::Runtime& r = require(rt, function);
    (r.*member)(convert(require(args, function)), static_cast<ktune::Stream>(stream));
    return KTUNE_OK;
  });
}

}  // namespace

static_assert(KTUNE_PLAN_TUNED == static_cast<int>(ktune::PlanInfo::Source::kTuned) &&
              KTUNE_PLAN_NEAREST == static_cast<int>(ktune::PlanInfo::Source::kNearest) &&
              KTUNE_PLAN_DEFAULT == static_cast<int>(ktune::PlanInfo::Source::kDefault));
static_assert(KTUNE_DTYPE_BF16 == static_cast<int>(ktune::DType::kBF16) &&
              KTUNE_DTYPE_FP8E4M3 == static_cast<int>(ktune::DType::kFP8E4M3));
static_assert(KTUNE_EPILOGUE_BIAS_SILU == static_cast<int>(ktune::Epilogue::kBiasSilu) &&
              KTUNE_MISS_ERROR == static_cast<int>(ktune::MissPolicy::kError) &&
              KTUNE_MASK_PADDING == static_cast<int>(ktune::SoftmaxMask::kPadding) &&
              KTUNE_ROPE_GPTJ == static_cast<int>(ktune::RopeStyle::kGptj) &&
              KTUNE_FP8_ROWCOL == static_cast<int>(ktune::Fp8Scaling::kRowCol) &&
              KTUNE_LAYOUT_NN == static_cast<int>(ktune::Layout::kNN));

namespace {

/// A user kernel's dims from "name=value,..." (core/shape.hpp), and its dtype by name.
ktune::ProblemDims user_dims(const char* shape, const char* function) {
  if (shape == nullptr)
    throw ktune::Error(ktune::ErrorKind::kBadInput, std::string(function) + ": shape is NULL");
  return ktune::Shape::parse(shape).dims();
}

std::string user_kernel(const char* kernel, const char* function) {
  if (kernel == nullptr)
    throw ktune::Error(ktune::ErrorKind::kBadInput, std::string(function) + ": kernel is NULL");
  return kernel;
}

ktune::DType user_dtype(const char* dtype, const char* function) {
  if (dtype == nullptr)
    throw ktune::Error(ktune::ErrorKind::kBadInput, std::string(function) + ": dtype is NULL");
  return ktune::dtype_from_string(dtype);
}

}  // namespace

extern "C" {

int ktune_runtime_prepare_kernel(ktune_runtime* rt, const char* kernel, const char* shape, const char* dtype,
                                 ktune_plan_info* info, int* verified) {
  return guarded([&] {
    constexpr const char* kFunction = "ktune_runtime_prepare_kernel";
    ktune::Runtime& r = require(rt, kFunction);
    const ktune::PlanInfo p =
        r.prepare(user_kernel(kernel, kFunction), user_dims(shape, kFunction), user_dtype(dtype, kFunction));
    fill(info, p);
    if (verified != nullptr) *verified = p.verified ? 1 : 0;
    return KTUNE_OK;
  });
}

int ktune_runtime_launch(ktune_runtime* rt, const char* kernel, const char* shape, const char* dtype,
                         void* const* buffers, size_t count, void* stream) {
  return guarded([&] {
    constexpr const char* kFunction = "ktune_runtime_launch";
    ktune::Runtime& r = require(rt, kFunction);
    if (buffers == nullptr && count > 0)
      throw ktune::Error(ktune::ErrorKind::kBadInput, "ktune_runtime_launch: buffers is NULL");
    const std::vector<void*> list(buffers, buffers + count);
    r.launch(user_kernel(kernel, kFunction), user_dims(shape, kFunction), user_dtype(dtype, kFunction), list,
             static_cast<ktune::Stream>(stream));
    return KTUNE_OK;
  });
}

void ktune_runtime_options_init(ktune_runtime_options* o) {
  if (o == nullptr) return;
  *o = ktune_runtime_options{};
  o->on_miss = KTUNE_MISS_NEAREST;
  o->compile_on_miss = 1;
}

void ktune_gemm_args_init(ktune_gemm_args* a) {
  if (a != nullptr) *a = ktune_gemm_args{.dtype = KTUNE_DTYPE_BF16};
}
void ktune_rmsnorm_args_init(ktune_rmsnorm_args* a) {
  if (a != nullptr) *a = ktune_rmsnorm_args{.eps = 1e-6f, .dtype = KTUNE_DTYPE_BF16};
}
void ktune_rmsnorm_rope_args_init(ktune_rmsnorm_rope_args* a) {
  if (a != nullptr) *a = ktune_rmsnorm_rope_args{.eps = 1e-6f, .dtype = KTUNE_DTYPE_BF16};
}
void ktune_rope_append_args_init(ktune_rope_append_args* a) {
  if (a != nullptr) *a = ktune_rope_append_args{.seq_tokens = 1, .eps = 1e-6f, .dtype = KTUNE_DTYPE_BF16};
}
void ktune_softmax_args_init(ktune_softmax_args* a) {
  if (a != nullptr) *a = ktune_softmax_args{.scale = 1.0f, .dtype = KTUNE_DTYPE_BF16};
}
void ktune_swiglu_args_init(ktune_swiglu_args* a) {
  if (a != nullptr) *a = ktune_swiglu_args{.dtype = KTUNE_DTYPE_BF16};
}
void ktune_decode_attention_args_init(ktune_decode_attention_args* a) {
  if (a != nullptr) *a = ktune_decode_attention_args{.dtype = KTUNE_DTYPE_BF16};
}
void ktune_fp8_gemm_args_init(ktune_fp8_gemm_args* a) {
  if (a != nullptr) *a = ktune_fp8_gemm_args{};
}

int ktune_runtime_create(const ktune_runtime_options* options, ktune_runtime** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    if (out == nullptr) bad("ktune_runtime_create: out is NULL");
    ktune_runtime_options o;
    ktune_runtime_options_init(&o);
    if (options != nullptr) o = *options;
    ktune::RuntimeOptions cpp;
    cpp.db_path = o.db_path != nullptr ? o.db_path : "";
    cpp.device = o.device;
    cpp.on_miss = enum_of<ktune::MissPolicy>(o.on_miss, 3, "on_miss");
    cpp.compile_on_miss = o.compile_on_miss != 0;
    if (o.device < 0) bad(fmt::format("ktune_runtime_create: device={} is negative", o.device));
    *out = new ktune_runtime{ktune::Runtime(std::move(cpp))};
    return KTUNE_OK;
  });
}

int ktune_runtime_record_misses(ktune_runtime* rt, const char* path) {
  return guarded([&] {
    if (rt == nullptr) bad("ktune_runtime_record_misses: rt is NULL");
    rt->runtime.record_misses(path != nullptr ? path : "");
    return KTUNE_OK;
  });
}

void ktune_runtime_destroy(ktune_runtime* rt) {
  t_last_error.clear();
  delete rt;  // ~Runtime never throws (it logs)
}

// Each operator's prepare and launch entry points, generated alike.
#define KTUNE_DISPATCH_ENTRY_POINTS(op)                                                                     \
  int ktune_runtime_prepare_##op(ktune_runtime* rt, const ktune_##op##_args* args, ktune_plan_info* info) { \
    return prepare(rt, args, info, "ktune_runtime_prepare_" #op);                                           \
  }                                                                                                         \
  int ktune_runtime_##op(ktune_runtime* rt, const ktune_##op##_args* args, void* stream) {                  \
    return launch(rt, args, stream, "ktune_runtime_" #op, &ktune::Runtime::op);                             \
  }

KTUNE_DISPATCH_ENTRY_POINTS(gemm)
KTUNE_DISPATCH_ENTRY_POINTS(rmsnorm)
KTUNE_DISPATCH_ENTRY_POINTS(rmsnorm_rope)
KTUNE_DISPATCH_ENTRY_POINTS(rope_append)
KTUNE_DISPATCH_ENTRY_POINTS(softmax)
KTUNE_DISPATCH_ENTRY_POINTS(swiglu)
KTUNE_DISPATCH_ENTRY_POINTS(decode_attention)
KTUNE_DISPATCH_ENTRY_POINTS(fp8_gemm)
#undef KTUNE_DISPATCH_ENTRY_POINTS

const char* ktune_runtime_gpu_name(const ktune_runtime* rt) {
  t_last_error.clear();
  return rt != nullptr ? rt->runtime.gpu_name().c_str() : "";
}
size_t ktune_runtime_tuned_keys(const ktune_runtime* rt) {
  t_last_error.clear();
  return rt != nullptr ? rt->runtime.tuned_keys() : 0;
}
size_t ktune_runtime_prepared_plans(const ktune_runtime* rt) {
  t_last_error.clear();
  return rt != nullptr ? rt->runtime.prepared_plans() : 0;
}

const char* ktune_runtime_last_error(void) { return t_last_error.c_str(); }

const char* ktune_runtime_version(void) {
  t_last_error.clear();
  return KTUNE_VERSION_STRING;
}

}  // extern "C"
