"""`ktune serve` tuning jobs without a GPU: compile-only jobs submitted, streamed as Server-Sent
Events, queued one after the other on their lane, cancelled, and resumed after `kill -9`."""

import json
import signal
import sqlite3
import time
import urllib.request

import pytest

from conftest import TOKEN, Server, error_of

SMALL_JOB = {"kernel": "rmsnorm", "shapes": ["rows=16,hidden=4096"], "dtype": "f16", "compile_only": True,
             "arch": "sm_90", "strategy": "exhaustive", "budget": 3}
LONG_JOB = {"kernel": "gemm", "shapes": ["m=16,n=4096,k=4096"], "dtype": "bf16", "compile_only": True,
            "arch": "sm_90", "strategy": "exhaustive", "budget": 40}


@pytest.fixture
def job_server(tmp_path, token_file):
    s = Server(["--db", str(tmp_path / "jobs.db"), "--token-file", str(token_file), "--devices", "none"])
    yield s
    s.stop()


def submit(server, body):
    a = server.post("/v1/jobs", body, token=TOKEN)
    assert a.status == 201, a.body
    return a.json()


def wait_for(server, job_id, predicate, timeout=300):
    deadline = time.time() + timeout
    while time.time() < deadline:
        view = server.get(f"/v1/jobs/{job_id}").json()
        if predicate(view):
            return view
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} never reached the state asked: {view}")


def read_events(server, job_id, timeout=300):
    """Every SSE event of the job until the stream ends: [(name, data), ...]."""
    events, name = [], None
    with urllib.request.urlopen(f"{server.url}/v1/jobs/{job_id}/events", timeout=timeout) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[len("data: "):])))
    return events


def test_compile_only_job_runs_streams_and_stores(job_server):
    job = submit(job_server, SMALL_JOB)
    assert job["state"] in ("queued", "running") and job["lane"] == "compile:sm_90"
    events = read_events(job_server, job["id"])
    names = [n for n, _ in events]
    assert names[0] == "state" and names[-1] == "state"
    assert events[-1][1]["state"] == "done", events[-1]
    assert "key" in names and "progress" in names
    view = job_server.get(f"/v1/jobs/{job['id']}").json()
    assert view["state"] == "done" and view["finished_at"]
    progress = view["progress"]
    assert progress["evaluations"] == 3 and progress["keys_done"] == 1
    assert sum(progress["outcomes"].values()) == 3
    # What the job compiled is in the database, for /v1/results.
    results = job_server.get("/v1/results?kernel=rmsnorm&page_size=100").json()
    assert results["total"] == 3
    listed = job_server.get("/v1/jobs").json()["jobs"]
    assert [j["id"] for j in listed] == [job["id"]]
    # A stream of a job that ended gives its state and ends.
    again = read_events(job_server, job["id"], timeout=30)
    assert again == [("state", again[0][1])] and again[0][1]["state"] == "done"
    metrics = job_server.get("/metrics").body
    assert 'ktune_jobs{state="done"} 1' in metrics
    assert "ktune_candidates_total{outcome=" in metrics


def test_jobs_of_one_lane_run_one_after_the_other(job_server):
    first = submit(job_server, SMALL_JOB)
    second = submit(job_server, dict(SMALL_JOB, dtype="bf16"))
    a = wait_for(job_server, first["id"], lambda v: v["state"] == "done")
    b = wait_for(job_server, second["id"], lambda v: v["state"] == "done")
    assert b["started_at"] >= a["finished_at"], (a, b)


def test_cancel_a_running_job_keeps_what_was_measured(job_server):
    job = submit(job_server, LONG_JOB)
    wait_for(job_server, job["id"], lambda v: v["state"] == "running" and v["progress"].get("evaluations", 0) >= 1)
    d = job_server.request("DELETE", f"/v1/jobs/{job['id']}", token=TOKEN)
    assert d.status == 200, d.body
    view = wait_for(job_server, job["id"], lambda v: v["state"] == "cancelled")
    assert 0 < view["progress"]["evaluations"] < 40
    assert job_server.get("/v1/results?kernel=gemm").json()["total"] >= 1
    again = job_server.request("DELETE", f"/v1/jobs/{job['id']}", token=TOKEN)
    assert again.status == 409 and error_of(again)["kind"] == "conflict"


def test_cancel_a_queued_job(job_server):
    running = submit(job_server, LONG_JOB)
    queued = submit(job_server, SMALL_JOB)
    d = job_server.request("DELETE", f"/v1/jobs/{queued['id']}", token=TOKEN)
    assert d.status == 200 and d.json()["state"] == "cancelled"
    job_server.request("DELETE", f"/v1/jobs/{running['id']}", token=TOKEN)
    wait_for(job_server, running["id"], lambda v: v["state"] in ("cancelled", "done"))


def test_bad_job_requests(job_server):
    cases = [
        ({"kernel": "gemm", "preset": "quick", "compile_only": True, "arch": "sm_90"}, "preset"),
        ({"kernel": "nosuch", "shapes": ["m=1"], "compile_only": True, "arch": "sm_90"}, "nosuch"),
        ({"preset": "../../etc/passwd", "compile_only": True, "arch": "sm_90"}, "preset"),
        ({"kernel": "gemm", "shape_set": "/etc/passwd", "compile_only": True, "arch": "sm_90"}, "shape_set"),
        ({"kernel": "gemm", "compile_only": True, "arch": "sm_90; rm -rf /"}, "arch"),
        ({"kernel": "gemm", "compile_only": "yes", "arch": "sm_90"}, "compile_only"),
        ({"kernel": "gemm", "budget": -1, "compile_only": True, "arch": "sm_90"}, "budget"),
        ({"kernel": "gemm", "colour": "red"}, "colour"),
        ({"kernel": ["gemm", 3], "compile_only": True, "arch": "sm_90"}, "kernel"),
    ]
    for body, part in cases:
        a = job_server.post("/v1/jobs", body, token=TOKEN)
        assert a.status == 400, (body, a.body)
        assert part in error_of(a)["message"], (body, a.body)
    no_gpu = job_server.post("/v1/jobs", {"kernel": "gemm"}, token=TOKEN)
    assert no_gpu.status == 503 and "compile_only" in error_of(no_gpu)["message"]
    assert job_server.get("/v1/jobs/99999").status == 404
    assert job_server.get("/v1/jobs/99999/events").status == 404
    assert job_server.request("DELETE", "/v1/jobs/99999", token=TOKEN).status == 404
    assert job_server.get("/v1/jobs/abc").status == 404


def measurement_rows(db):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute("SELECT id, shape, dtype, layout, config_name FROM measurements ORDER BY id").fetchall()
    finally:
        con.close()


def test_a_killed_server_resumes_its_job(tmp_path, token_file):
    db = tmp_path / "resume.db"
    args = ["--db", str(db), "--token-file", str(token_file), "--devices", "none"]
    first = Server(args)
    job = submit(first, LONG_JOB)
    deadline = time.time() + 300
    while time.time() < deadline and len(measurement_rows(db)) < 3:
        time.sleep(0.2)
    first.stop(sig=signal.SIGKILL)
    before = measurement_rows(db)
    assert 3 <= len(before) < 40, len(before)

    second = Server(args)
    try:
        view = wait_for(second, job["id"], lambda v: v["state"] == "done")
        after = measurement_rows(db)
        assert after[:len(before)] == before  # nothing committed was lost
        keys = [row[1:] for row in after]
        assert len(keys) == len(set(keys)), "a config was measured twice"
        assert len(after) == 40
        assert view["progress"]["evaluations"] == 40
    finally:
        assert second.stop() == 0


def test_sigterm_requeues_the_running_job(tmp_path, token_file):
    db = tmp_path / "stop.db"
    args = ["--db", str(db), "--token-file", str(token_file), "--devices", "none"]
    first = Server(args)
    job = submit(first, LONG_JOB)
    wait_for(first, job["id"], lambda v: v["progress"].get("evaluations", 0) >= 1)
    assert first.stop() == 0
    con = sqlite3.connect(str(db))
    state = con.execute("SELECT state FROM jobs WHERE id = ?", (job["id"],)).fetchone()[0]
    con.close()
    assert state == "queued"
    second = Server(args)
    try:
        wait_for(second, job["id"], lambda v: v["state"] == "done")
        keys = [row[1:] for row in measurement_rows(db)]
        assert len(keys) == len(set(keys)) == 40
    finally:
        assert second.stop() == 0


def thread_count(pid):
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads line")


def test_idle_lanes_hold_no_thread(job_server):
    # 40 jobs on odd arches once took the thread count from 69 to 108, for good: a lane's thread now
    # ends when its queue runs empty.
    pid = job_server.proc.pid
    # The baseline after one job has come and gone (the server's own threads all started by then).
    first = submit(job_server, dict(SMALL_JOB, budget=1))
    assert wait_for(job_server, first["id"], lambda v: v["state"] in ("done", "failed"))["state"] == "done"
    time.sleep(1)
    before = thread_count(pid)
    arches = ["sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100"]
    jobs = [submit(job_server, dict(SMALL_JOB, arch=a, budget=1)) for a in arches]
    for j in jobs:
        assert wait_for(job_server, j["id"], lambda v: v["state"] in ("done", "failed"))["state"] == "done"
    deadline = time.time() + 10
    while thread_count(pid) > before + 1 and time.time() < deadline:
        time.sleep(0.1)
    assert thread_count(pid) <= before + 1, (before, thread_count(pid))
    # A lane that ended starts again for its next job.
    again = submit(job_server, dict(SMALL_JOB, arch="sm_80", budget=1))
    assert wait_for(job_server, again["id"], lambda v: v["state"] in ("done", "failed"))["state"] == "done"


def test_a_job_may_plan_at_most_4096_keys(job_server):
    shapes = [f"rows={r},hidden=4096" for r in range(1, 1500)]
    big = job_server.post("/v1/jobs", dict(SMALL_JOB, shapes=shapes, dtypes=["f16", "bf16", "f32"]), token=TOKEN)
    assert big.status == 400 and "at most 4096" in error_of(big)["message"], big.body
    assert job_server.get("/v1/jobs").json()["jobs"] == []  # nothing stored
