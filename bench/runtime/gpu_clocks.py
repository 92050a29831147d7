"""The GPU's SM clock and power draw while a stretch of a bench runs, sampled by `nvidia-smi` in a
process beside it: whether a config was timed at the clock the others were (a compute-bound
kernel held on the GPU for long may run under its power limit at a lower clock).

    with ClockSampler() as clocks:
        ...                                  # the measured work
    clocks.summary()  # {"samples": 57, "sm_mhz_median": 1980.0, "sm_mhz_min": 1755.0, ...}

Where `nvidia-smi` is missing or fails, the summary says so ({"samples": 0, "error": ...}) and the
bench goes on: the clocks explain a figure, they are not one.
"""

import os
import shutil
import statistics
import subprocess

QUERY = "clocks.sm,power.draw"


def gpu_index():
    """The nvidia-smi index of the GPU torch calls device 0: CUDA_VISIBLE_DEVICES' first entry when
    it is a number, else 0."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return first if first.isdigit() else "0"


def parse(text):
    """(SM MHz, watts) of each well-formed line of `nvidia-smi --query-gpu=clocks.sm,power.draw
    --format=csv,noheader,nounits` output; lines it cannot read (a field "[N/A]", a partial last
    line) are left out."""
    out = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 2:
            continue
        try:
            out.append((float(fields[0]), float(fields[1])))
        except ValueError:
            continue
    return out


def summarize(samples, error=None):
    """The samples' count, SM clock median and minimum, power median and maximum."""
    if not samples:
        return {"samples": 0, "error": error or "no sample"}
    mhz = [s[0] for s in samples]
    watts = [s[1] for s in samples]
    return {"samples": len(samples), "sm_mhz_median": statistics.median(mhz), "sm_mhz_min": min(mhz),
            "power_w_median": statistics.median(watts), "power_w_max": max(watts)}


def describe(summary):
    """One line of a summary for a table: "SM 1980 MHz median (min 1755), 512 W median (max 690)"."""
    if not summary.get("samples"):
        return f"not sampled ({summary.get('error', 'no sample')})"
    return (f"SM {summary['sm_mhz_median']:.0f} MHz median (min {summary['sm_mhz_min']:.0f}), "
            f"{summary['power_w_median']:.0f} W median (max {summary['power_w_max']:.0f}), "
            f"{summary['samples']} samples")


class ClockSampler:
    """Samples every `interval_ms` from entering the `with` block to leaving it."""

    def __init__(self, interval_ms=50):
        self.interval_ms = interval_ms
        self.proc = None
        self.text = ""
        self.error = None

    def __enter__(self):
        exe = shutil.which("nvidia-smi")
        if exe is None:
            self.error = "nvidia-smi is not on PATH"
            return self
        try:
            self.proc = subprocess.Popen([exe, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
                                          f"-lms={self.interval_ms}", "-i", gpu_index()],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        except OSError as e:
            self.error = f"nvidia-smi did not start: {e}"
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.terminate()
            try:
                out, err = self.proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, err = self.proc.communicate()
            self.text = out
            if not parse(out):
                self.error = (err.strip() or "nvidia-smi printed no sample")[:300]
            self.proc = None
        return False

    def summary(self):
        return summarize(parse(self.text), self.error)
