"""A Triton RMSNorm as Triton's tutorials write one: one program per row, the whole row in one
block, f32 accumulation; the configs are the block width and the warps. Tuned and served by ktune
through ktune.triton (the configs compile ahead of time for the GPU's architecture)."""

import triton
import triton.language as tl


@triton.jit
def rmsnorm_rows(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(y_ptr + row * n_cols + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)


def signature(dtype="bf16"):
    return {"x_ptr": f"*{dtype}", "w_ptr": f"*{dtype}", "y_ptr": f"*{dtype}", "n_cols": "i32", "eps": "fp32",
            "BLOCK": "constexpr"}


def configs(hidden):
    """(constexprs, num_warps, num_stages) of every config for rows of `hidden` values."""
    block = triton.next_power_of_2(hidden)
    return [({"BLOCK": block}, warps, 1) for warps in (1, 2, 4, 8, 16) if block // (32 * warps) >= 1]
