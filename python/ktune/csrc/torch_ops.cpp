// ktune's most-called torch operators with their CUDA kernels in C++ (the "native" door of
// ktune.torch): torch.ops.ktune.{gemm, rmsnorm, rmsnorm_residual, softmax, rope_append,
// decode_attention}.
//
// The schemas, the fake (meta) kernels and the CPU refusals stay in python/ktune/torch.py; this
// file registers only the CUDA kernels, so a call goes dispatcher -> C++ -> the C dispatch ABI
// (include/ktune/ktune_runtime.h) without entering Python. Each kernel checks its tensors as
// ktune.Runtime does in Python (device, dtype, dimensions, shapes, contiguity), allocates its
// outputs like its first input and launches on the current CUDA stream of that tensor's device.
// The C library validates every launch again (DESIGN D8).
//
// The runtime of a device is the ktune.Runtime that ktune.torch serves that device from: the
// Python side binds its handle (ktune::_native_bind) whenever it picks one (use_runtime, or the
// first use of a device); a device met first here gets a default runtime made here.
// The same library is a Python module too (ktune._native.MODULE): the out-variant that
// ktune.Runtime.softmax calls on torch tensors with its output given (softmax_into).
// Built on first import by python/ktune/_native.py (torch.utils.cpp_extension), linked against
// the libktune_runtime.so that Python loaded.

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "ktune/ktune_runtime.h"

namespace {

// A number in a message, as text: streaming integers (as IntArrayRef) into TORCH_CHECK's message
// crashed this extension on the GPU machine's torch 2.11 build, so messages join strings only.
std::string text_of(int64_t value) { return std::to_string(value); }

constexpr int kMaxDevices = 64;
std::array<std::atomic<ktune_runtime*>, kMaxDevices> g_runtimes{};
std::mutex g_create;

// The runtime serving the tensor's device: the one Python bound (use_runtime, or its first use of
// the device), else one made here as ktune.Runtime(device=N) makes it ($KTUNE_DB, nearest tuned
// shape), kept for the process.
ktune_runtime* runtime_of(const at::Tensor& t) {
  const int device = t.get_device();
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "ktune: CUDA device ", text_of(device),
              " is out of range");
  ktune_runtime* rt = g_runtimes[device].load(std::memory_order_acquire);
  if (rt != nullptr) return rt;
  std::lock_guard<std::mutex> lock(g_create);
  rt = g_runtimes[device].load(std::memory_order_acquire);
  if (rt != nullptr) return rt;
  ktune_runtime_options options;
  ktune_runtime_options_init(&options);
  options.device = device;
  if (ktune_runtime_create(&options, &rt) != KTUNE_OK) {
    const char* message = ktune_runtime_last_error();
    TORCH_CHECK(false, "ktune: no runtime for cuda:", text_of(device), ": ", message ? message : "error");
  }
  g_runtimes[device].store(rt, std::memory_order_release);
  return rt;
}

// "[3, 640]": sizes and strides in messages, formatted here (streaming c10::IntArrayRef into a
// TORCH_CHECK message crashed this extension on the GPU machine's torch 2.11 build).
std::string dims(c10::IntArrayRef values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

void* stream_of(const at::Tensor& t) { return c10::cuda::getCurrentCUDAStream(t.get_device()).stream(); }

void launched(int code, const char* op) {
  if (code == KTUNE_OK) return;
  const char* message = ktune_runtime_last_error();
  const std::string text = std::string("ktune::") + op + ": " + (message ? message : "error");
  if (code == KTUNE_ERR_BAD_INPUT) TORCH_CHECK_VALUE(false, text);
  TORCH_CHECK(false, text);
}

int dtype_code(const at::Tensor& t, const char* op, const char* name) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return KTUNE_DTYPE_F32;
    case at::kHalf:
      return KTUNE_DTYPE_F16;
    case at::kBFloat16:
      return KTUNE_DTYPE_BF16;
    default:
      TORCH_CHECK_VALUE(false, op, ": ", name, " is ", t.scalar_type(), "; f32, f16 or bf16 is needed");
  }
  return -1;
}

// The checks a tensor argument gets: its device (the call's first tensor's), dimensions and dtype.
void expect(const at::Tensor& t, const at::Tensor& first, const char* op, const char* name, int64_t dim) {
  TORCH_CHECK_VALUE(t.is_cuda(), op, ": ", name, " is on ", t.device(), ", not on a CUDA device");
  TORCH_CHECK_VALUE(t.get_device() == first.get_device(), op, ": ", name, " is on ", t.device(),
                    "; the other tensors are on ", first.device());
  TORCH_CHECK_VALUE(t.dim() == dim, op, ": ", name, " has ", text_of(t.dim()), " dimensions ",
                    dims(t.sizes()), "; it needs ", text_of(dim));
  TORCH_CHECK_VALUE(t.scalar_type() == first.scalar_type(), op, ": ", name, " is ", t.scalar_type(),
                    "; the other tensors are ", first.scalar_type());
}

void contiguous(const at::Tensor& t, const char* op, const char* name) {
  TORCH_CHECK_VALUE(t.is_contiguous(), op, ": ", name, " (shape ", dims(t.sizes()), ", strides ",
                    dims(t.strides()), ") is not contiguous");
}

// A 2-D operand whose rows may be strided (a column slice of a fused projection): its row stride.
int64_t row_stride(const at::Tensor& t, const char* op, const char* name) {
  TORCH_CHECK_VALUE(t.size(1) <= 1 || t.stride(1) == 1, op, ": ", name, "'s columns are strided (",
                    dims(t.strides()), "); rows of contiguous elements are needed");
  if (t.size(0) <= 1) return t.size(1);
  TORCH_CHECK_VALUE(t.stride(0) >= t.size(1), op, ": ", name, "'s rows overlap (shape ", dims(t.sizes()),
                    ", strides ", dims(t.strides()),
                    "): a row stride of at least the row's length is needed");
  return t.stride(0);
}

void shape(const at::Tensor& t, std::initializer_list<int64_t> expected, const char* op, const char* name) {
  TORCH_CHECK_VALUE(t.sizes().equals(expected), op, ": ", name, " has shape ", dims(t.sizes()), "; expected ",
                    dims(c10::IntArrayRef(expected)));
}

int epilogue_code(c10::string_view e) {
  if (e == "none") return KTUNE_EPILOGUE_NONE;
  if (e == "bias") return KTUNE_EPILOGUE_BIAS;
  if (e == "silu") return KTUNE_EPILOGUE_SILU;
  if (e == "bias+silu") return KTUNE_EPILOGUE_BIAS_SILU;
  TORCH_CHECK_VALUE(false, "epilogue='", std::string(e),
                    "' is not one of ['none', 'bias', 'silu', 'bias+silu']");
  return -1;
}

at::Tensor gemm(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& bias,
                c10::string_view layout, c10::string_view epilogue) {
  constexpr const char* op = "gemm";
  TORCH_CHECK_VALUE(layout == "nt" || layout == "nn", "layout='", std::string(layout),
                    "' is not one of ['nt', 'nn']");
  const bool nt = layout == "nt";
  expect(a, a, op, "a", 2);
  expect(b, a, op, "b", 2);
  ktune_gemm_args args;
  ktune_gemm_args_init(&args);
  args.dtype = dtype_code(a, op, "a");
  args.m = a.size(0);
  args.k = a.size(1);
  args.n = nt ? b.size(0) : b.size(1);
  if (nt)
    shape(b, {args.n, args.k}, op, "b");
  else
    shape(b, {args.k, args.n}, op, "b");
  args.epilogue = epilogue_code(epilogue);
  const bool has_bias = args.epilogue == KTUNE_EPILOGUE_BIAS || args.epilogue == KTUNE_EPILOGUE_BIAS_SILU;
  if (has_bias) {
    TORCH_CHECK_VALUE(bias.has_value(), "gemm: bias is required");
    expect(*bias, a, op, "bias", 1);
    contiguous(*bias, op, "bias");
    shape(*bias, {args.n}, op, "bias");
    args.bias = bias->data_ptr();
  } else {
    TORCH_CHECK_VALUE(!bias.has_value(), "gemm: bias given without a bias epilogue ('bias' or 'bias+silu')");
  }
  args.lda = row_stride(a, op, "a");
  args.ldb = row_stride(b, op, "b");
  at::Tensor c = at::empty({args.m, args.n}, a.options());
  args.ldc = args.n;
  args.layout = nt ? KTUNE_LAYOUT_NT : KTUNE_LAYOUT_NN;
  args.a = a.data_ptr();
  args.b = b.data_ptr();
  args.c = c.data_ptr();
  launched(ktune_runtime_gemm(runtime_of(a), &args, stream_of(a)), op);
  return c;
}

void rmsnorm_args(ktune_rmsnorm_args& args, const at::Tensor& x, const at::Tensor& w, double eps) {
  constexpr const char* op = "rmsnorm";
  expect(x, x, op, "x", 2);
  contiguous(x, op, "x");
  expect(w, x, op, "w", 1);
  contiguous(w, op, "w");
  ktune_rmsnorm_args_init(&args);
  args.dtype = dtype_code(x, op, "x");
  args.rows = x.size(0);
  args.hidden = x.size(1);
  shape(w, {args.hidden}, op, "w");
  args.x = x.data_ptr();
  args.w = w.data_ptr();
  args.eps = static_cast<float>(eps);
}

at::Tensor rmsnorm(const at::Tensor& x, const at::Tensor& w, double eps) {
  ktune_rmsnorm_args args;
  rmsnorm_args(args, x, w, eps);
  at::Tensor y = at::empty_like(x);
  args.y = y.data_ptr();
  launched(ktune_runtime_rmsnorm(runtime_of(x), &args, stream_of(x)), "rmsnorm");
  return y;
}

std::tuple<at::Tensor, at::Tensor> rmsnorm_residual(const at::Tensor& x, const at::Tensor& residual,
                                                    const at::Tensor& w, double eps) {
  ktune_rmsnorm_args args;
  rmsnorm_args(args, x, w, eps);
  expect(residual, x, "rmsnorm", "residual", 2);
  contiguous(residual, "rmsnorm", "residual");
  shape(residual, {args.rows, args.hidden}, "rmsnorm", "residual");
  at::Tensor y = at::empty_like(x);
  at::Tensor residual_out = at::empty_like(x);
  args.residual = residual.data_ptr();
  args.y = y.data_ptr();
  args.residual_out = residual_out.data_ptr();
  launched(ktune_runtime_rmsnorm(runtime_of(x), &args, stream_of(x)), "rmsnorm");
  return {y, residual_out};
}

// A tensor of a fixed dtype (cos_sin f32, positions and tables i32) on the call's device.
void expect_of(const at::Tensor& t, const at::Tensor& first, const char* op, const char* name, int64_t dim,
               at::ScalarType type, const char* type_name) {
  TORCH_CHECK_VALUE(t.is_cuda() && t.get_device() == first.get_device(), op, ": ", name, " is on ",
                    t.device(), "; the other tensors are on ", first.device());
  TORCH_CHECK_VALUE(t.dim() == dim, op, ": ", name, " has ", text_of(t.dim()), " dimensions ",
                    dims(t.sizes()), "; it needs ", text_of(dim));
  TORCH_CHECK_VALUE(t.scalar_type() == type, op, ": ", name, " is ", t.scalar_type(), "; it must be ",
                    type_name);
  contiguous(t, op, name);
}

// A tensor of the call's dtype, contiguous.
void expect_dense(const at::Tensor& t, const at::Tensor& first, const char* op, const char* name,
                  int64_t dim) {
  expect(t, first, op, name, dim);
  contiguous(t, op, name);
}

// The args of a softmax of x (checked) with mask a KTUNE_MASK_* code; y is the caller's to set.
void softmax_args(ktune_softmax_args& args, const at::Tensor& x, double scale, int64_t mask,
                  const std::optional<at::Tensor>& lengths) {
  constexpr const char* op = "softmax";
  expect_dense(x, x, op, "x", 2);
  ktune_softmax_args_init(&args);
  args.dtype = dtype_code(x, op, "x");
  args.rows = x.size(0);
  args.cols = x.size(1);
  args.scale = static_cast<float>(scale);
  args.mask = static_cast<int>(mask);
  if (mask == KTUNE_MASK_PADDING) {
    TORCH_CHECK_VALUE(lengths.has_value(), "softmax: lengths is required");
    expect_of(*lengths, x, op, "lengths", 1, at::kInt, "i32");
    shape(*lengths, {args.rows}, op, "lengths");
    args.lengths = static_cast<const int32_t*>(lengths->data_ptr());
  } else {
    TORCH_CHECK_VALUE(mask == KTUNE_MASK_NONE || mask == KTUNE_MASK_CAUSAL, "softmax: mask code ",
                      text_of(mask), " is not none, causal or padding");
  }
  args.x = x.data_ptr();
}

int64_t mask_code(c10::string_view mask) {
  if (mask == "none") return KTUNE_MASK_NONE;
  if (mask == "causal") return KTUNE_MASK_CAUSAL;
  if (mask == "padding") return KTUNE_MASK_PADDING;
  TORCH_CHECK_VALUE(false, "mask='", std::string(mask), "' is not one of ['none', 'causal', 'padding']");
  return -1;
}

at::Tensor softmax(const at::Tensor& x, double scale, c10::string_view mask,
                   const std::optional<at::Tensor>& lengths) {
  ktune_softmax_args args;
  softmax_args(args, x, scale, mask_code(mask), lengths);
  at::Tensor y = at::empty_like(x);
  args.y = y.data_ptr();
  launched(ktune_runtime_softmax(runtime_of(x), &args, stream_of(x)), "softmax");
  return y;
}

int rope_style(c10::string_view style) {
  if (style == "neox") return KTUNE_ROPE_NEOX;
  if (style == "gptj") return KTUNE_ROPE_GPTJ;
  TORCH_CHECK_VALUE(false, "style='", std::string(style), "' is not one of ['neox', 'gptj']");
  return -1;
}

at::Tensor rope_append(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const at::Tensor& cos_sin, const at::Tensor& positions, at::Tensor& k_cache,
                       at::Tensor& v_cache, const std::optional<at::Tensor>& q_weight,
                       const std::optional<at::Tensor>& k_weight,
                       const std::optional<at::Tensor>& block_table, int64_t seq_tokens, double eps,
                       c10::string_view style) {
  constexpr const char* op = "rope_append";
  expect_dense(q, q, op, "q", 3);
  ktune_rope_append_args args;
  ktune_rope_append_args_init(&args);
  args.dtype = dtype_code(q, op, "q");
  args.tokens = q.size(0);
  args.heads_q = q.size(1);
  args.head_dim = q.size(2);
  expect_dense(k, q, op, "k", 3);
  TORCH_CHECK_VALUE(k.size(0) == args.tokens && k.size(2) == args.head_dim, op, ": k has shape ",
                    dims(k.sizes()), "; expected [", text_of(args.tokens), ", heads_kv, ",
                    text_of(args.head_dim), "]");
  args.heads_kv = k.size(1);
  expect_dense(v, q, op, "v", 3);
  shape(v, {args.tokens, args.heads_kv, args.head_dim}, op, "v");
  TORCH_CHECK_VALUE(q_weight.has_value() == k_weight.has_value(), op,
                    ": give both q_weight and k_weight (the RMSNorm form) or neither");
  expect_of(cos_sin, q, op, "cos_sin", 2, at::kFloat, "f32");
  args.rot_dim = cos_sin.size(1);
  args.max_pos = cos_sin.size(0);
  TORCH_CHECK_VALUE(args.rot_dim > 0 && args.rot_dim <= args.head_dim && args.max_pos > 0, op,
                    ": cos_sin has shape ", dims(cos_sin.sizes()),
                    "; expected [max_pos, rot_dim] with 0 < rot_dim <= head_dim ", text_of(args.head_dim));
  expect_of(positions, q, op, "positions", 1, at::kInt, "i32");
  shape(positions, {args.tokens}, op, "positions");
  TORCH_CHECK_VALUE(seq_tokens >= 1, op, ": seq_tokens=", text_of(seq_tokens),
                    " must be >= 1 (the tokens of a sequence)");
  const int64_t sequences = (args.tokens + seq_tokens - 1) / seq_tokens;
  expect_dense(k_cache, q, op, "k_cache", 4);
  if (block_table.has_value()) {
    expect_of(*block_table, q, op, "block_table", 2, at::kInt, "i32");
    TORCH_CHECK_VALUE(block_table->size(0) >= sequences, op, ": block_table has shape ",
                      dims(block_table->sizes()), "; expected [sequences >= ", text_of(sequences),
                      ", max_blocks]");
    TORCH_CHECK_VALUE(k_cache.size(1) == args.heads_kv && k_cache.size(3) == args.head_dim, op,
                      ": k_cache has shape ", dims(k_cache.sizes()), "; expected [num_blocks, ",
                      text_of(args.heads_kv), ", block_size, ", text_of(args.head_dim),
                      "] (the paged cache)");
    args.block_table = static_cast<const int32_t*>(block_table->data_ptr());
    args.max_blocks = block_table->size(1);
    args.num_blocks = k_cache.size(0);
  } else {
    TORCH_CHECK_VALUE(
        k_cache.size(0) >= sequences && k_cache.size(1) == args.heads_kv && k_cache.size(3) == args.head_dim,
        op, ": k_cache has shape ", dims(k_cache.sizes()), "; expected [sequences >= ", text_of(sequences),
        ", ", text_of(args.heads_kv), ", seq_max, ", text_of(args.head_dim), "]");
  }
  expect_dense(v_cache, q, op, "v_cache", 4);
  TORCH_CHECK_VALUE(v_cache.sizes().equals(k_cache.sizes()), op, ": v_cache has shape ",
                    dims(v_cache.sizes()), "; expected ", dims(k_cache.sizes()));
  if (q_weight.has_value()) {
    expect_dense(*q_weight, q, op, "q_weight", 1);
    expect_dense(*k_weight, q, op, "k_weight", 1);
    shape(*q_weight, {args.head_dim}, op, "q_weight");
    shape(*k_weight, {args.head_dim}, op, "k_weight");
    args.q_weight = q_weight->data_ptr();
    args.k_weight = k_weight->data_ptr();
  }
  at::Tensor q_out = at::empty_like(q);
  args.q = q.data_ptr();
  args.k = k.data_ptr();
  args.v = v.data_ptr();
  args.cos_sin = static_cast<const float*>(cos_sin.data_ptr());
  args.positions = static_cast<const int32_t*>(positions.data_ptr());
  args.q_out = q_out.data_ptr();
  args.k_cache = k_cache.data_ptr();
  args.v_cache = v_cache.data_ptr();
  args.seq_tokens = seq_tokens;
  args.cache_rows = k_cache.size(2);
  args.eps = static_cast<float>(eps);
  args.style = rope_style(style);
  launched(ktune_runtime_rope_append(runtime_of(q), &args, stream_of(q)), op);
  return q_out;
}

at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
                            const std::optional<at::Tensor>& context_lens, double scale,
                            const std::optional<at::Tensor>& block_table) {
  constexpr const char* op = "decode_attention";
  expect_dense(q, q, op, "q", 3);
  ktune_decode_attention_args args;
  ktune_decode_attention_args_init(&args);
  args.dtype = dtype_code(q, op, "q");
  args.batch = q.size(0);
  args.heads_q = q.size(1);
  args.head_dim = q.size(2);
  expect_dense(k_cache, q, op, "k_cache", 4);
  expect_dense(v_cache, q, op, "v_cache", 4);
  const bool paged = block_table.has_value();
  TORCH_CHECK_VALUE((paged || k_cache.size(0) == args.batch) && k_cache.size(3) == args.head_dim, op,
                    ": k_cache has shape ", dims(k_cache.sizes()), "; expected ",
                    paged ? std::string("[num_blocks, heads_kv, block_size, ")
                          : "[" + std::to_string(args.batch) + ", heads_kv, seq_max, ",
                    text_of(args.head_dim), "]");
  TORCH_CHECK_VALUE(v_cache.sizes().equals(k_cache.sizes()), op, ": v_cache has shape ",
                    dims(v_cache.sizes()), "; expected ", dims(k_cache.sizes()));
  if (context_lens.has_value()) {
    expect_of(*context_lens, q, op, "context_lens", 1, at::kInt, "i32");
    shape(*context_lens, {args.batch}, op, "context_lens");
    args.context_lens = static_cast<const int32_t*>(context_lens->data_ptr());
  }
  if (paged) {
    expect_of(*block_table, q, op, "block_table", 2, at::kInt, "i32");
    TORCH_CHECK_VALUE(block_table->size(0) == args.batch, op, ": block_table has shape ",
                      dims(block_table->sizes()), "; expected [", text_of(args.batch), ", max_blocks]");
    args.block_table = static_cast<const int32_t*>(block_table->data_ptr());
    args.max_blocks = block_table->size(1);
    args.num_blocks = k_cache.size(0);
    args.block_size = k_cache.size(2);
    args.seq_max = 0;
    args.seq = args.max_blocks * args.block_size;
  } else {
    args.seq = args.seq_max = k_cache.size(2);
  }
  args.heads_kv = k_cache.size(1);
  args.scale = static_cast<float>(scale);
  at::Tensor o = at::empty_like(q);
  args.q = q.data_ptr();
  args.k = k_cache.data_ptr();
  args.v = v_cache.data_ptr();
  args.o = o.data_ptr();
  launched(ktune_runtime_decode_attention(runtime_of(q), &args, stream_of(q)), op);
  return o;
}

// ktune.Runtime.softmax on torch tensors with y given (python/ktune/runtime.py calls this instead
// of its ctypes path, which costs about 3 µs more a call on the GPU machines' hosts). runtime: the
// Runtime's handle, device: its device, mask: a KTUNE_MASK_* code, stream: none for torch's current
// stream of x's device. Bad input raises ValueError before anything is launched; the library's own
// error is returned as its code, which Python raises as the Runtime does every other.
int softmax_into(std::intptr_t runtime, int64_t device, const at::Tensor& x, const at::Tensor& y,
                 double scale, int64_t mask, const std::optional<at::Tensor>& lengths,
                 std::optional<std::intptr_t> stream) {
  ktune_softmax_args args;
  try {
    TORCH_CHECK_VALUE(runtime != 0, "the runtime is closed");
    softmax_args(args, x, scale, mask, lengths);
    TORCH_CHECK_VALUE(x.get_device() == device, "softmax: x is on ", x.device(),
                      "; the runtime is on cuda:", text_of(device));
    expect_dense(y, x, "softmax", "y", 2);
    TORCH_CHECK_VALUE(y.sizes().equals(x.sizes()), "softmax: y has shape ", dims(y.sizes()), "; expected ",
                      dims(x.sizes()));
  } catch (const c10::Error& e) {
    throw pybind11::value_error(e.what_without_backtrace());
  }
  args.y = y.data_ptr();
  void* on = stream ? reinterpret_cast<void*>(*stream) : stream_of(x);
  return ktune_runtime_softmax(reinterpret_cast<ktune_runtime*>(runtime), &args, on);
}

// Python binds the runtime it serves a device from (0: none, the next call makes one).
void bind(int64_t device, int64_t handle) {
  TORCH_CHECK_VALUE(device >= 0 && device < kMaxDevices, "ktune: CUDA device ", text_of(device),
                    " is out of range");
  g_runtimes[device].store(reinterpret_cast<ktune_runtime*>(handle), std::memory_order_release);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ktune, m) { m.def("_native_bind(int device, int handle) -> ()", &bind); }

TORCH_LIBRARY_IMPL(ktune, CUDA, m) {
  m.impl("gemm", &gemm);
  m.impl("rmsnorm", &rmsnorm);
  m.impl("rmsnorm_residual", &rmsnorm_residual);
  m.impl("softmax", &softmax);
  m.impl("rope_append", &rope_append);
  m.impl("decode_attention", &decode_attention);
}

// The extension is a Python module too (ktune._native.MODULE): ktune.Runtime's native doors.
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("softmax_into", &softmax_into, "ktune.Runtime.softmax with y given, on torch tensors");
}
