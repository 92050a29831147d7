#!/usr/bin/env python3
"""Writes the worker-protocol fuzz target's seed corpus (fuzz/corpus/worker_protocol/): frames as
measure/worker_protocol.hpp defines them (16-byte header, CBOR body, attachment), with a hello, a
measure request whose cubin is a slice of the attachment, a result and a shutdown. Python's standard
library has no CBOR encoder, so the small subset JSON needs is written here."""
import math
import pathlib
import struct

def cbor(v):
    def head(major, n):
        if n < 24: return bytes([major << 5 | n])
        for extra, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
            if n < 1 << (8 * struct.calcsize(fmt)): return bytes([major << 5 | extra]) + struct.pack(fmt, n)
        raise ValueError(n)
    if v is None: return b"\xf6"
    if v is True: return b"\xf5"
    if v is False: return b"\xf4"
    if isinstance(v, int): return head(0, v) if v >= 0 else head(1, -1 - v)
    if isinstance(v, float): return b"\xfb" + struct.pack(">d", v)
    if isinstance(v, str):
        b = v.encode()
        return head(3, len(b)) + b
    if isinstance(v, (bytes, bytearray)): return head(2, len(v)) + bytes(v)
    if isinstance(v, list): return head(4, len(v)) + b"".join(cbor(x) for x in v)
    if isinstance(v, dict): return head(5, len(v)) + b"".join(cbor(k) + cbor(x) for k, x in v.items())
    raise TypeError(type(v))

def frame(kind, body, attachment=b"", version=2):
    b = cbor(body)
    return b"KTWP" + struct.pack("<HHII", version, kind, len(b), len(attachment)) + b + attachment

timing = {"warmup_min_launches": 10, "warmup_min_ms": 20.0, "flush": "rotate", "l2_flush_factor": 2.0,
          "rotate_max_sets": 8, "graph_batch_threshold_us": 1000.0, "graph_batch_target_us": 2000.0,
          "graph_batch_max_launches": 64, "rse_target": 0.005, "min_samples": 10, "max_samples": 1000,
          "max_time_ms": 2000.0, "retime_top_k": 3, "candidate_timeout_ms": 10000.0, "counters": True,
          "metrics": ["dram__bytes_read.sum"], "activity_timer": False, "seed": 7}
cubin = b"\x7fELF" + bytes(range(60))
launch = {"cubin": {"offset": 0, "bytes": len(cubin)}, "function": "copy_kernel", "grid": [128, 1, 1],
          "block": [256, 1, 1], "shared_bytes": 0,
          "args": [{"kind": "buffer", "buffer": "x"}, {"kind": "buffer", "buffer": "y"},
                   {"kind": "u64", "i": 32768}, {"kind": "f32", "f": 0.5},
                   {"kind": "tensor_map", "buffer": "x", "map": [64, 64, 1, 1], "dtype": "bf16"}]}
request = {"id": 3, "name": "copy.f32.v4", "device": 0,
           "buffers": [{"name": "x", "dtype": "f32", "count": 32768, "init": "random", "scale": 1.0},
                       {"name": "y", "dtype": "f32", "count": 32768, "init": "poison", "scale": 1.0}],
           "launches": [launch], "main_launch": 0, "checks": [{"output": "y", "reference": "x"}],
           "timing": timing, "bytes_moved": 262144.0, "flops": 0.0, "reference": dict(launch, cubin=cubin)}
stats = {"median_us": 4.1, "min_us": 4.0, "max_us": 4.6, "mean_us": 4.2, "p90_us": 4.4, "stdev_us": 0.1,
         "rse_median": None, "samples": 40}
result = {"id": 3, "name": "copy.f32.v4", "outcome": "ok", "reason": "", "samples_us": [4.1, 4.0, 4.6],
          "stop_reason": "rse", "drift": 0.01, "launches_per_sample": 16, "flush": "rotate", "rel_err": 0.0,
          "max_abs_err": 0.0, "counters": {"dram_bytes_read": 131072.0}, "resources": {"registers": 32},
          "gbps": 63.9, "tflops": 0.0, "wall_ms": 80.5, "worker_pid": 4242, "stats": stats,
          "sm_clock_mhz": 1980.0}
hello = {"version": 2, "pid": 4242, "ok": True, "error": "", "device": "NVIDIA H200"}

out = pathlib.Path(__file__).resolve().parent / "corpus" / "worker_protocol"
out.mkdir(parents=True, exist_ok=True)
seeds = {
    "hello": frame(1, hello),
    "measure": frame(2, request, cubin),
    "result": frame(3, result),
    "shutdown": frame(4, None),
    "conversation": frame(1, hello) + frame(2, request, cubin) + frame(3, result) + frame(4, None),
    "slice_outside": frame(2, dict(request, launches=[dict(launch, cubin={"offset": 60, "bytes": 9})]), cubin),
    "old_version": frame(1, hello, version=1),
    # Numbers out of their field's range: undefined behaviour in nlohmann's get<int>() before the fix.
    "float_device": frame(2, dict(request, device=1e300), cubin),
    "negative_grid": frame(2, dict(request, launches=[dict(launch, grid=[-1, 1, 1])]), cubin),
    "float_samples": frame(3, dict(result, stats=dict(stats, samples=-2.5e19))),
}
for name, data in seeds.items():
    (out / name).write_bytes(data)
print(f"wrote {len(seeds)} seeds to {out}")
