#!/usr/bin/env python3
"""Host cost of one tuned-kernel call through the Python doors, against torch's own call.

Times, on a GPU, the same decode-size GEMM (m=1, n=256, k=512, bf16: the kernel takes a few
microseconds, so the host cost shows) issued through
  ktune.Runtime.gemm (ctypes over libktune_runtime.so: tensor introspection, checks, the C ABI),
  torch.ops.ktune.gemm (the custom op: output allocation, dispatcher, then the same),
  torch.nn.functional.linear (cuBLAS through torch, for reference),
as microseconds a call over many calls (synchronised every 256 so the launch queue never fills).
The C++ and C doors and a bare cuLaunchKernel are in ktune_bench_runtime (runtime_bench.cpp).

    python3 bench/runtime/dispatch_cost.py [--calls 20000] [--json OUT]
"""

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))

import torch  # noqa: E402


def per_call_us(fn, calls):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(calls):
        fn()
        if i % 256 == 255:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e6 / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--json")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("dispatch_cost: no CUDA device", file=sys.stderr)
        return 3
    import ktune
    import ktune.torch as kt
    rt = ktune.Runtime()
    kt.use_runtime(rt)
    a = torch.randn(1, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(1, 256, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.current_stream().cuda_stream
    rows = {
        "ktune.Runtime.gemm (ctypes)": per_call_us(lambda: rt.gemm(a, w, c, stream=stream), args.calls),
        "torch.ops.ktune.gemm (custom op)": per_call_us(lambda: torch.ops.ktune.gemm(a, w, None, "nt", "none"),
                                                        args.calls),
        "torch.nn.functional.linear (cuBLAS)": per_call_us(lambda: torch.nn.functional.linear(a, w), args.calls),
    }
    print(f"{rt.gpu_name}, torch {torch.__version__}: gemm m=1 n=256 k=512 bf16, microseconds a call")
    print("| door | us/call |\n|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {v:.2f} |")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
