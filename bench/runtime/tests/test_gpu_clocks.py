"""bench/runtime/gpu_clocks.py without a GPU: what it reads of nvidia-smi's output (random samples
here, the summary computed independently below), a sampler whose nvidia-smi is a stand-in script,
and one whose nvidia-smi is missing."""

import os
import pathlib
import random
import stat
import statistics
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import gpu_clocks  # noqa: E402


def _lines(samples):
    return "".join(f"{mhz:.0f}, {w:.2f}\n" for mhz, w in samples)


def test_parse_and_summary_match_the_samples():
    rng = random.Random()
    samples = [(float(rng.randrange(1200, 1981)), round(rng.uniform(70.0, 700.0), 2)) for _ in range(rng.randrange(5, 60))]
    text = "[N/A], 80.00\n" + _lines(samples) + "1980, "  # an unreadable line first, a partial one last
    got = gpu_clocks.parse(text)
    assert got == samples
    s = gpu_clocks.summarize(got)
    assert s["samples"] == len(samples)
    assert s["sm_mhz_median"] == statistics.median(m for m, _ in samples)
    assert s["sm_mhz_min"] == min(m for m, _ in samples)
    assert s["power_w_max"] == max(w for _, w in samples)
    line = gpu_clocks.describe(s)
    assert f"min {min(m for m, _ in samples):.0f}" in line and f"{len(samples)} samples" in line


def test_no_sample_is_said_not_summarized():
    assert gpu_clocks.summarize([], "nvidia-smi is not on PATH") == {"samples": 0, "error": "nvidia-smi is not on PATH"}
    assert gpu_clocks.describe({"samples": 0, "error": "boom"}) == "not sampled (boom)"


def _fake_smi(folder, samples):
    script = folder / "nvidia-smi"
    script.write_text("#!/bin/sh\ncat <<'X'\n" + _lines(samples) + "X\nexec sleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_a_sampler_reads_what_nvidia_smi_printed(tmp_path, monkeypatch):
    rng = random.Random()
    samples = [(float(rng.randrange(1500, 1981)), round(rng.uniform(100.0, 650.0), 2)) for _ in range(7)]
    _fake_smi(tmp_path, samples)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    with gpu_clocks.ClockSampler(interval_ms=10) as sampler:
        time.sleep(0.5)  # the stand-in prints at once, then waits to be stopped
    s = sampler.summary()
    assert s["samples"] == 7 and s["sm_mhz_min"] == min(m for m, _ in samples)


def test_without_nvidia_smi_the_summary_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no nvidia-smi
    with gpu_clocks.ClockSampler() as sampler:
        pass
    assert sampler.summary() == {"samples": 0, "error": "nvidia-smi is not on PATH"}
