"""A Triton RMSNorm as Triton's tutorials write one: one program per row, the whole row in one
block, f32 accumulation; the configs are the warps of a block as wide as the row (up to 4096
values). Tuned, verified and served by ktune through ktune.triton.autotune: the configs compile ahead
of time for the GPU's architecture, ktune's worker checks each against the CUDA reference below and
times it, and a call launches the stored winner through Triton's own launcher.

    y = rmsnorm(x, w)                                    # x: [rows, hidden] CUDA tensor, hidden <= 4096
    rmsnorm_rows.tune([{"rows": 4096, "n_cols": 4096}])  # tune a key now, through `ktune tune`
"""

import triton
import triton.language as tl

from ktune import triton as kt

HIDDEN_MAX = 4096

# The reference: one thread a row, f32 accumulation; plain and obviously right.
REFERENCE = r"""
template <typename T>
__global__ void rmsnorm_reference(const T* x, const T* w, T* y, int n_cols, float eps) {
  const long long row = blockIdx.x;
  float sum = 0.0f;
  for (int c = 0; c < n_cols; ++c) {
    const float v = static_cast<float>(x[row * n_cols + c]);
    sum += v * v;
  }
  const float inv = rsqrtf(sum / n_cols + eps);
  for (int c = 0; c < n_cols; ++c)
    y[row * n_cols + c] = static_cast<T>(static_cast<float>(x[row * n_cols + c]) * inv * static_cast<float>(w[c]));
}
"""


def configs(hidden):
    """(constexprs, num_warps, num_stages) of every config for rows of `hidden` values."""
    block = triton.next_power_of_2(hidden)
    return [({"BLOCK": block}, warps, 1) for warps in (1, 2, 4, 8, 16) if block // (32 * warps) >= 1]


def signature(dtype="bf16"):
    return {"x_ptr": f"*{dtype}", "w_ptr": f"*{dtype}", "y_ptr": f"*{dtype}", "n_cols": "i32", "eps": "fp32",
            "BLOCK": "constexpr"}


@kt.autotune(
    configs=[triton.Config(c, num_warps=w, num_stages=s) for c, w, s in configs(HIDDEN_MAX)],
    key=["n_cols"],
    dims={"rows": lambda a: a["x_ptr"].numel() // a["n_cols"]},
    dims_order=["rows", "n_cols"],
    dtypes=["bf16", "f16"],
    args={"x_ptr": kt.input_buffer("rows * n_cols"), "w_ptr": kt.input_buffer("n_cols"),
          "y_ptr": kt.output_buffer("rows * n_cols"), "n_cols": kt.scalar("n_cols"), "eps": kt.scalar(1e-6, "f32")},
    grid="rows",
    reference=kt.CudaReference(REFERENCE, "rmsnorm_reference", grid="rows", block=1),
    work={"bytes": "(2 * rows * n_cols + n_cols) * elem_bytes", "flops": "4 * rows * n_cols"},
)
@triton.jit
def rmsnorm_rows(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * n_cols + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(x, w, eps=1e-6):
    """RMSNorm of each row of the contiguous CUDA tensor `x` ([..., hidden], hidden <= 4096)."""
    hidden = x.shape[-1]
    if hidden > HIDDEN_MAX or not x.is_contiguous():
        raise ValueError(f"rmsnorm: rows of at most {HIDDEN_MAX} contiguous values (got {tuple(x.shape)})")
    y = x.new_empty(x.shape)
    rmsnorm_rows[(x.numel() // hidden,)](x, w, y, hidden, eps)
    return y
