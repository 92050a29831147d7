"""A Triton matmul as Triton's tutorials write one: C[M,N] = A[M,K] @ B[K,N] in tiles of BLOCK_M x
BLOCK_N, K in steps of BLOCK_K, programs grouped GROUP_M tile rows at a time for L2 reuse, f32
accumulation. The 24 configs are the usual BLOCK_M/N/K, GROUP_M, num_warps and num_stages sweep.
Tuned and served by ktune through ktune.triton."""

import itertools

import triton
import triton.language as tl


@triton.jit
def matmul_tiles(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows_in_group
    tile_n = (pid % per_group) // rows_in_group
    rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - k0 * BLOCK_K
        acc += tl.dot(tl.load(a, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0),
                      tl.load(b, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0))
        a += BLOCK_K * stride_ak
        b += BLOCK_K * stride_bk
    c = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def signature(dtype="bf16"):
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}"}
    sig.update({n: "i32" for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                                   "stride_cn")})
    sig.update({n: "constexpr" for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")})
    return sig


def configs():
    """(constexprs, num_warps, num_stages) of the 24 configs."""
    out = []
    for (bm, bn, bk), (warps, stages) in itertools.product(
            [(128, 256, 64), (128, 128, 64), (64, 256, 32), (128, 64, 32), (64, 128, 32), (64, 64, 64)],
            [(8, 3), (4, 4), (4, 3), (8, 4)]):
        out.append(({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, warps, stages))
    return out
