#!/usr/bin/env python3
"""torch's own RMSNorm, softmax and SwiGLU at the ktune_ops_bench sizes, timed with the same
protocol (CUDA events, an L2 flush before each sample, median of 30; graphs of >= 200 us for
kernels under 20 us), so ktune's figures and torch's compare under one flush mode.

  --flush dirty: zero a 2x-L2 buffer (as triton's do_bench and the harness's L2Flusher)
  --flush clean: the same, then read a second 2x-L2 buffer (no dirty line left in L2)

Usage (GPU machine, torch installed): python3 ops_torch_baseline.py [--flush clean|dirty] [--filter TEXT]
"""
import argparse
import statistics

import torch
import torch.nn.functional as F

CEILING_GBS = 4280.0  # H200 device-to-device copy (docs/perf/measurement.md)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flush", choices=["clean", "dirty"], default="clean")
    ap.add_argument("--filter", action="append", default=[])
    args = ap.parse_args()
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    written = torch.empty(2 * l2 // 4, dtype=torch.int32, device=dev)
    read = torch.ones(2 * l2 // 4, dtype=torch.int32, device=dev)

    def flush():
        written.zero_()
        if args.flush == "clean":
            read.sum()

    b = torch.bfloat16
    cases = []

    def rms(rows, hidden, residual=False):
        x = torch.randn(rows, hidden, dtype=b, device=dev)
        w = torch.randn(hidden, dtype=b, device=dev)
        if residual:
            r = torch.randn(rows, hidden, dtype=b, device=dev)

            def f():
                s = x + r
                return F.rms_norm(s, (hidden,), w, 1e-6), s

            return (f"rmsnorm residual rows={rows},hidden={hidden}", f, 4 * rows * hidden * 2 + hidden * 2)
        return (f"rmsnorm  rows={rows},hidden={hidden}", lambda: F.rms_norm(x, (hidden,), w, 1e-6),
                2 * rows * hidden * 2 + hidden * 2)

    def smx(rows, cols):
        x = torch.randn(rows, cols, dtype=b, device=dev)
        return (f"softmax  rows={rows},cols={cols}", lambda: torch.softmax(x * 0.75, dim=-1), 2 * rows * cols * 2)

    def swi(m, i):
        x = torch.randn(m, 2 * i, dtype=b, device=dev)
        return (f"swiglu fused m={m},i={i}", lambda: F.silu(x[:, :i]) * x[:, i:], 3 * m * i * 2)

    for c in [lambda: rms(1, 4096), lambda: rms(128, 4096), lambda: rms(4096, 4096),
              lambda: rms(4096, 4096, True), lambda: rms(16384, 8192), lambda: rms(16384, 8192, True),
              lambda: smx(4096, 32768), lambda: smx(64, 262144), lambda: swi(128, 14336),
              lambda: swi(16384, 14336)]:
        cases.append(c)

    print(f"torch {torch.__version__}; L2 {l2 >> 20} MiB; flush {args.flush}", flush=True)
    for make in cases:
        label, fn, nbytes = make()
        if args.filter and not any(f in label for f in args.filter):
            continue
        for _ in range(10):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        eager = []
        for _ in range(5):
            flush()
            start.record()
            fn()
            end.record()
            end.synchronize()
            eager.append(start.elapsed_time(end) * 1e3)
        batch, run = 1, fn
        if statistics.median(eager) < 20.0:
            batch = max(10, int(200.0 / max(statistics.median(eager), 1.0)))
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                fn()
                with torch.cuda.graph(g):
                    for _ in range(batch):
                        fn()
            torch.cuda.current_stream().wait_stream(s)
            run = g.replay
        samples = []
        for _ in range(30):
            flush()
            start.record()
            run()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end) * 1e3 / batch)
        us = statistics.median(samples)
        gbs = nbytes / us / 1e3
        print(f"{label:45s} {us:10.2f} us {gbs:8.0f} GB/s {100 * gbs / CEILING_GBS:5.1f}%"
              f"{' (graph)' if batch > 1 else ''}", flush=True)


if __name__ == "__main__":
    main()
