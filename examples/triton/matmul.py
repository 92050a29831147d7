"""A Triton matmul as Triton's tutorials write one: C[M,N] = A[M,K] @ B[K,N] in tiles of BLOCK_M x
BLOCK_N, K in steps of BLOCK_K, programs grouped GROUP_M tile rows at a time for L2 reuse, f32
accumulation. The 24 configs are the usual BLOCK_M/N/K, GROUP_M, num_warps and num_stages sweep.
Tuned, verified (against the CUDA reference below) and served by ktune through
ktune.triton.autotune.

    c = matmul(a, b)                                               # row-major CUDA tensors
    matmul_tiles.tune([{"m": 16, "n": 4096, "k": 4096}])           # tune a key now
"""

import itertools

import triton
import triton.language as tl

from ktune import triton as kt

# The reference: one thread an element of C, f32 accumulation over K.
REFERENCE = r"""
template <typename T>
__global__ void matmul_reference(const T* a, const T* b, T* c, int M, int N, int K, int sam, int sak, int sbk,
                                 int sbn, int scm, int scn) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(M) * N) return;
  const long long m = i / N, n = i % N;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += static_cast<float>(a[m * sam + k * sak]) * static_cast<float>(b[k * sbk + n * sbn]);
  c[m * scm + n * scn] = static_cast<T>(acc);
}
"""


def configs():
    """(constexprs, num_warps, num_stages) of the 24 configs."""
    out = []
    for (bm, bn, bk), (warps, stages) in itertools.product(
            [(128, 256, 64), (128, 128, 64), (64, 256, 32), (128, 64, 32), (64, 128, 32), (64, 64, 64)],
            [(8, 3), (4, 4), (4, 3), (8, 4)]):
        out.append(({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, warps, stages))
    return out


def signature(dtype="bf16"):
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}"}
    sig.update({n: "i32" for n in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                                   "stride_cn")})
    sig.update({n: "constexpr" for n in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")})
    return sig


@kt.autotune(
    configs=[triton.Config(c, num_warps=w, num_stages=s) for c, w, s in configs()],
    key=["M", "N", "K"],
    dtypes=["bf16", "f16"],
    # The key's dimensions are m, n, k (ktune's shapes are lower case): m=16,n=4096,k=4096.
    args={"a_ptr": kt.input_buffer("m * k"), "b_ptr": kt.input_buffer("k * n"), "c_ptr": kt.output_buffer("m * n"),
          "M": kt.scalar("m"), "N": kt.scalar("n"), "K": kt.scalar("k"), "stride_am": kt.scalar("k"),
          "stride_ak": kt.scalar(1), "stride_bk": kt.scalar("n"), "stride_bn": kt.scalar(1),
          "stride_cm": kt.scalar("n"), "stride_cn": kt.scalar(1)},
    grid="ceil_div(m, BLOCK_M) * ceil_div(n, BLOCK_N)",
    reference=kt.CudaReference(REFERENCE, "matmul_reference", grid="ceil_div(m * n, 256)", block=256),
    work={"bytes": "(m * k + k * n + m * n) * elem_bytes", "flops": "2 * m * n * k"},
)
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


def matmul(a, b):
    """a @ b for contiguous row-major CUDA tensors [M, K] and [K, N]."""
    M, K = a.shape
    K2, N = b.shape
    if K != K2 or not (a.is_contiguous() and b.is_contiguous()):
        raise ValueError(f"matmul: contiguous [M, K] @ [K, N] (got {tuple(a.shape)} @ {tuple(b.shape)})")
    c = a.new_empty((M, N))
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    matmul_tiles[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c
