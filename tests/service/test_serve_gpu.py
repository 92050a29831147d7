"""`ktune serve` on a GPU: a measuring job submitted over HTTP, its events streamed to the end, the
report fetched, and the job's winner then answered by /v1/best. Skips without a usable GPU."""

import re

import pytest

from conftest import Server
from test_serve_jobs import read_events, submit


def test_a_measuring_job_over_http_names_the_winner_that_best_answers(tmp_path, token_file):
    probe = Server(["--db", str(tmp_path / "gpu.db"), "--token-file", str(token_file)])
    try:
        devices = probe.get("/v1/devices").json()
        if not devices["available"] or not devices["devices"]:
            pytest.skip("needs a GPU: no usable CUDA device (" + devices.get("reason", "none listed") + ")")
        job = submit(probe, {"kernel": "rmsnorm", "shapes": ["rows=16,hidden=4096"], "dtype": "bf16",
                             "strategy": "exhaustive", "budget": 6, "device": 0})
        assert job["lane"] == "device:0"
        # While the job runs, /metrics shows the GPU's SM clock and temperature (NVML).
        metrics = probe.get("/metrics").body
        clock = re.search(r'^ktune_gpu_sm_clock_mhz\{gpu="0"\} (\S+)$', metrics, re.M)
        temperature = re.search(r'^ktune_gpu_temperature_celsius\{gpu="0"\} (\S+)$', metrics, re.M)
        assert clock and 100 <= float(clock.group(1)) <= 5000, metrics
        assert temperature and 5 <= float(temperature.group(1)) <= 110, metrics
        events = read_events(probe, job["id"], timeout=900)
        assert events[-1][0] == "state" and events[-1][1]["state"] == "done", events[-1]
        keys = [data for name, data in events if name == "key"]
        assert len(keys) == 1 and keys[0]["winner"], keys
        view = probe.get(f"/v1/jobs/{job['id']}").json()
        assert view["progress"]["outcomes"].get("ok", 0) >= 1
        winner = view["progress"]["winners"][0]
        # Markdown: the HTML page also needs Chart.js installed on the GPU host (libjs-chart.js).
        report = probe.get("/v1/report?format=md&kernel=rmsnorm")
        assert report.status == 200 and winner["config_name"] in report.body
        gpu = devices["devices"][0]["name"]
        best = probe.get(f"/v1/best?gpu={gpu.replace(' ', '%20')}&kernel=rmsnorm&shape=rows=16,hidden=4096"
                         "&dtype=bf16&fallback=false")
        assert best.status == 200, best.body
        assert best.json()["config_name"] == winner["config_name"] == keys[0]["winner"]
    finally:
        assert probe.stop() == 0
