"""A Triton kernel with a `prune_configs_by`, for the prune tests (test_triton_prune.py): y = 2x over
n values, BLOCK values a program; the prune keeps the blocks no wider than the next power of two
of n (at least the narrowest), as kernels prune tiles larger than the problem. Importable by
name, so `python -m ktune.triton tune` can tune its recorded misses."""

import triton
import triton.language as tl

from ktune import triton as kt

BLOCKS = (128, 512, 2048)
WARPS = (1, 4)

REFERENCE = r"""
template <typename T>
__global__ void scale_reference(const T* x, T* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = static_cast<T>(static_cast<float>(x[i]) * 2.0f);
}
"""


def blocks_that_fit(configs, named_args, **kwargs):
    """The configs whose BLOCK is at most n rounded up to a power of two; the narrowest if none."""
    fit = triton.next_power_of_2(int(named_args["n"]))
    kept = [c for c in configs if c.kwargs["BLOCK"] <= fit]
    return kept or [c for c in configs if c.kwargs["BLOCK"] == min(BLOCKS)]


@kt.autotune(
    configs=[triton.Config({"BLOCK": b}, num_warps=w, num_stages=1) for b in BLOCKS for w in WARPS],
    key=["n"],
    prune_configs_by={"early_config_prune": blocks_that_fit},
    dtypes=["bf16", "f16"],
    args={"x_ptr": kt.input_buffer("n"), "y_ptr": kt.output_buffer("n"), "n": kt.scalar("n")},
    grid="ceil_div(n, BLOCK)",
    reference=kt.CudaReference(REFERENCE, "scale_reference", grid="ceil_div(n, 256)", block=256),
)
@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2, mask=i < n)
