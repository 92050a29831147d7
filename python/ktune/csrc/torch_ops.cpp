// ktune's most-called torch operators with their CUDA kernels in C++ (the "native" door of
// ktune.torch): torch.ops.ktune.{gemm, rmsnorm, rmsnorm_residual, softmax}.
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
// Built on first import by python/ktune/_native.py (torch.utils.cpp_extension), linked against
// the libktune_runtime.so that Python loaded.

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "ktune/ktune_runtime.h"

namespace {

constexpr int kMaxDevices = 64;
std::array<std::atomic<ktune_runtime*>, kMaxDevices> g_runtimes{};
std::mutex g_create;

// The runtime serving the tensor's device: the one Python bound (use_runtime, or its first use of
// the device), else one made here as ktune.Runtime(device=N) makes it ($KTUNE_DB, nearest tuned
// shape), kept for the process.
ktune_runtime* runtime_of(const at::Tensor& t) {
  const int device = t.get_device();
  TORCH_CHECK(device >= 0 && device < kMaxDevices, "ktune: CUDA device ", device, " is out of range");
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
    TORCH_CHECK(false, "ktune: no runtime for cuda:", device, ": ", message ? message : "error");
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
  TORCH_CHECK_VALUE(t.dim() == dim, op, ": ", name, " has ", t.dim(), " dimensions ", dims(t.sizes()),
                    "; it needs ", dim);
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

at::Tensor softmax(const at::Tensor& x, double scale, c10::string_view mask,
                   const std::optional<at::Tensor>& lengths) {
  constexpr const char* op = "softmax";
  expect(x, x, op, "x", 2);
  contiguous(x, op, "x");
  ktune_softmax_args args;
  ktune_softmax_args_init(&args);
  args.dtype = dtype_code(x, op, "x");
  args.rows = x.size(0);
  args.cols = x.size(1);
  args.scale = static_cast<float>(scale);
  if (mask == "none") {
    args.mask = KTUNE_MASK_NONE;
  } else if (mask == "causal") {
    args.mask = KTUNE_MASK_CAUSAL;
  } else if (mask == "padding") {
    args.mask = KTUNE_MASK_PADDING;
    TORCH_CHECK_VALUE(lengths.has_value(), "softmax: lengths is required");
    const at::Tensor& l = *lengths;
    TORCH_CHECK_VALUE(l.is_cuda() && l.get_device() == x.get_device(), "softmax: lengths is on ", l.device(),
                      "; the other tensors are on ", x.device());
    TORCH_CHECK_VALUE(l.dim() == 1, "softmax: lengths has ", l.dim(), " dimensions; it needs 1");
    TORCH_CHECK_VALUE(l.scalar_type() == at::kInt, "softmax: lengths is ", l.scalar_type(),
                      "; it must be i32");
    contiguous(l, op, "lengths");
    shape(l, {args.rows}, op, "lengths");
    args.lengths = static_cast<const int32_t*>(l.data_ptr());
  } else {
    TORCH_CHECK_VALUE(false, "mask='", std::string(mask), "' is not one of ['none', 'causal', 'padding']");
  }
  at::Tensor y = at::empty_like(x);
  args.x = x.data_ptr();
  args.y = y.data_ptr();
  launched(ktune_runtime_softmax(runtime_of(x), &args, stream_of(x)), op);
  return y;
}

// Python binds the runtime it serves a device from (0: none, the next call makes one).
void bind(int64_t device, int64_t handle) {
  TORCH_CHECK_VALUE(device >= 0 && device < kMaxDevices, "ktune: CUDA device ", device, " is out of range");
  g_runtimes[device].store(reinterpret_cast<ktune_runtime*>(handle), std::memory_order_release);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(ktune, m) { m.def("_native_bind(int device, int handle) -> ()", &bind); }

TORCH_LIBRARY_IMPL(ktune, CUDA, m) {
  m.impl("gemm", &gemm);
  m.impl("rmsnorm", &rmsnorm);
  m.impl("rmsnorm_residual", &rmsnorm_residual);
  m.impl("softmax", &softmax);
}
