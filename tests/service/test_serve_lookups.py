"""`ktune serve` lookups, results, reports, info routes and metrics, over real HTTP."""

import json
import re
import shutil
import subprocess
import time
import urllib.parse

import pytest

from conftest import KTUNE, TOKEN, Server, error_of, expected_facts


def best_target(**params):
    return "/v1/best?" + urllib.parse.urlencode(params)


def test_health_version_devices(server):
    h = server.get("/v1/health")
    assert h.status == 200 and h.json()["status"] == "ok" and h.json()["read_only"] is False
    v = server.get("/v1/version").json()
    assert v["api"] == 1 and v["schema_version"] >= 2 and v["ktune"]
    d = server.get("/v1/devices")
    assert d.status == 200 and isinstance(d.json()["devices"], list)
    assert isinstance(d.json()["available"], bool)


def test_best_answers_the_fixture_winner_like_ktune_query(server, fixture_db):
    f = expected_facts()
    a = server.get(best_target(gpu=f["gpu"], kernel="gemm", shape=f["exact_shape"], dtype="bf16"))
    assert a.status == 200, a.body
    doc = a.json()
    assert doc["config_name"] == f["exact_config"] and doc["fallback"] is False
    # The same document `ktune query --json` prints for the file.
    q = subprocess.run([KTUNE, "query", "--db", str(fixture_db), "--gpu", f["gpu"], "--kernel", "gemm",
                        "--shape", f["exact_shape"], "--dtype", "bf16", "--json"],
                       capture_output=True, text=True, check=True)
    assert json.loads(q.stdout) == doc
    # Dimensions in another order name the same key; the nn layout has its own winner.
    again = server.get(best_target(gpu=f["gpu"], kernel="gemm", shape=f["reordered_shape"], dtype="bf16"))
    assert again.json()["config_name"] == f["exact_config"]
    nn = server.get(best_target(gpu=f["gpu"], kernel="gemm", shape=f["exact_shape"], dtype="bf16", layout="nn"))
    assert nn.json()["config_name"] == f["nn_config"]


def test_best_fallback_and_not_found(server):
    f = expected_facts()
    fb = server.get(best_target(gpu=f["gpu"], kernel="gemm", shape=f["fallback_shape"], dtype="bf16"))
    assert fb.status == 200 and fb.json()["fallback"] is True
    assert fb.json()["shape"] != fb.json()["tuned_shape"]
    none = server.get(best_target(gpu=f["gpu"], kernel="gemm", shape=f["fallback_shape"], dtype="bf16",
                                  fallback="false"))
    assert none.status == 404 and error_of(none)["kind"] == "not_found"


def test_best_bad_requests_name_the_bad_part(server):
    f = expected_facts()
    cases = [
        ({"kernel": "gemm", "dtype": "bf16"}, "shape"),
        ({"gpu": f["gpu"], "kernel": "nosuch", "shape": "m=1", "dtype": "bf16"}, "kernel"),
        ({"gpu": f["gpu"], "kernel": "gemm", "shape": "m=16,n=x,k=1", "dtype": "bf16"}, "shape"),
        ({"gpu": f["gpu"], "kernel": "gemm", "shape": f["exact_shape"], "dtype": "int3"}, "dtype"),
        ({"gpu": f["gpu"], "kernel": "gemm", "shape": f["exact_shape"], "dtype": "bf16", "layout": "zz"}, "layout"),
        ({"gpu": f["gpu"], "kernel": "gemm", "shape": f["exact_shape"], "dtype": "bf16", "fallback": "maybe"},
         "fallback"),
        ({"kernel": "gemm", "shape": f["exact_shape"], "dtype": "bf16"}, "gpu"),  # two GPUs: gpu is needed
    ]
    for params, part in cases:
        a = server.get(best_target(**params))
        assert a.status == 400, (params, a.body)
        assert part in error_of(a)["message"], (params, a.body)


def test_best_batch_answers_every_key_in_order(server):
    f = expected_facts()
    keys = [
        {"gpu": f["gpu"], "kernel": "gemm", "shape": f["exact_shape"], "dtype": "bf16"},
        {"gpu": f["gpu"], "kernel": "gemm", "shape": f["exact_shape"], "dtype": "bf16", "layout": "nn"},
        {"gpu": f["gpu"], "kernel": "gemm", "shape": f["fallback_shape"], "dtype": "bf16", "fallback": False},
    ]
    a = server.post("/v1/best:batch", {"keys": keys})
    assert a.status == 200, a.body
    results = a.json()["results"]
    assert [r.get("config_name") for r in results[:2]] == [f["exact_config"], f["nn_config"]]
    assert results[2]["error"]["kind"] == "not_found"
    assert server.post("/v1/best:batch", {"keys": "gemm"}).status == 400
    assert server.post("/v1/best:batch", {"keys": [{"kernel": 5}]}).status == 400
    assert server.post("/v1/best:batch", b"{not json").status == 400


def test_unknown_parameters_and_fields_are_refused_naming_them(server):
    f = expected_facts()
    key = {"gpu": f["gpu"], "kernel": "gemm", "shape": f["exact_shape"], "dtype": "bf16"}
    a = server.get(best_target(**key) + "&kernel_dir=/etc")
    assert a.status == 400 and "kernel_dir" in error_of(a)["message"], a.body
    assert "shape" in error_of(a)["message"]  # the known ones are listed
    for target in ("/v1/results?colour=red", "/v1/report?format=csv&pages=2", "/v1/jobs?limit=5&x=1",
                   "/v1/health?verbose=1"):
        b = server.get(target)
        assert b.status == 400 and error_of(b)["kind"] == "bad_request", (target, b.body)
    batch = server.post("/v1/best:batch", {"keys": [dict(key, kernel_dir="/etc")]})
    assert batch.status == 400 and "kernel_dir" in error_of(batch)["message"], batch.body
    extra = server.post("/v1/best:batch", {"keys": [key], "priority": "high"})
    assert extra.status == 400 and "priority" in error_of(extra)["message"], extra.body
    assert server.post("/v1/best:batch", {"keys": [key]}).status == 200


def test_results_are_paged_in_export_fields(server, fixture_db):
    first = server.get("/v1/results?page_size=3")
    assert first.status == 200, first.body
    doc = first.json()
    assert doc["page"] == 1 and len(doc["measurements"]) == 3 and doc["next_page"] == 2
    m = doc["measurements"][0]
    for field in ("id", "run_id", "gpu", "kernel", "shape", "dtype", "layout", "config_name", "config",
                  "outcome", "reason", "stats", "fidelity", "verified", "work_flops", "work_bytes", "counters",
                  "resources", "measured_at"):
        assert field in m, field
    everything = server.get("/v1/results?page_size=5000").json()
    assert everything["total"] == doc["total"] and everything["next_page"] is None
    ids = [r["id"] for r in everything["measurements"]]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    second = server.get("/v1/results?page_size=3&page=2").json()
    assert [r["id"] for r in second["measurements"]] == ids[3:6]
    only = server.get("/v1/results?kernel=rmsnorm&page_size=5000").json()
    assert only["total"] > 0 and all(r["kernel"] == "rmsnorm" for r in only["measurements"])
    assert server.get("/v1/results?since=2999-01-01").json()["total"] == 0
    assert server.get("/v1/results?since=yesterday").status == 400
    assert server.get("/v1/results?page=0").status == 400


def test_a_dtype_filter_that_names_no_dtype_is_refused(server):
    for target in ("/v1/results?dtype=f64", "/v1/report?format=csv&dtype=f64"):
        r = server.get(target)
        assert r.status == 400 and error_of(r)["kind"] == "bad_request", (target, r.body)
        message = error_of(r)["message"]
        assert "parameter 'dtype': unknown dtype 'f64' (known: f32, f16, bf16" in message, r.body
    assert server.get("/v1/results?dtype=").status == 200
    bf16 = server.get("/v1/results?dtype=bf16&page_size=5000").json()["measurements"]
    assert bf16 and all(r["dtype"] == "bf16" for r in bf16)


def test_results_post_is_idempotent(tmp_path, fixture_db, token_file):
    export = tmp_path / "export.json"
    subprocess.run([KTUNE, "cache", "export", "--db", str(fixture_db), "--out", str(export)], check=True,
                   capture_output=True)
    body = export.read_bytes()
    s = Server(["--db", str(tmp_path / "empty.db"), "--token-file", str(token_file), "--devices", "none"])
    try:
        first = s.post("/v1/results", body, token=TOKEN)
        assert first.status == 200, first.body
        added = first.json()["measurements_added"]
        assert added > 0
        again = s.post("/v1/results", body, token=TOKEN)
        assert again.json()["measurements_added"] == 0
        assert again.json()["measurements_skipped"] == added
        assert s.get("/v1/results?page_size=1").json()["total"] == added
        bad = s.post("/v1/results", {"format": "something-else"}, token=TOKEN)
        assert bad.status == 400 and "body" in error_of(bad)["message"]
        assert str(tmp_path) not in bad.body  # no server path leaks into an answer
    finally:
        assert s.stop() == 0


def test_reports_in_every_format(server):
    types = {"csv": "text/csv", "json": "application/json", "md": "text/markdown", "html": "text/html"}
    for fmt, ctype in types.items():
        a = server.get(f"/v1/report?format={fmt}")
        assert a.status == 200, (fmt, a.body[:200])
        assert a.headers["Content-Type"].startswith(ctype)
        assert "gemm" in a.body
    assert "rmsnorm" not in server.get("/v1/report?format=csv&kernel=gemm").body
    bad = server.get("/v1/report?format=pdf")
    assert bad.status == 400 and "format" in error_of(bad)["message"]


def metrics_with(server, wanted, timeout_s=5.0):
    """/metrics once every line of `wanted` is in it (or the last read after `timeout_s`): a request is
    counted once its answer has been sent, so the count of the request just answered may lag the
    client's receipt of it by a moment (seen under ASan)."""
    deadline = time.monotonic() + timeout_s
    while True:
        text = server.get("/metrics").body
        if all(w in text for w in wanted) or time.monotonic() > deadline:
            return text
        time.sleep(0.02)


def test_metrics_count_requests_and_lookups(server):
    f = expected_facts()
    for _ in range(3):
        server.get(best_target(gpu=f["gpu"], kernel="gemm", shape=f["exact_shape"], dtype="bf16"))
    server.get("/nowhere")
    counts = ['ktune_http_requests_total{route="/v1/best",status="200"} 3',
              'ktune_http_requests_total{route="unmatched",status="404"} 1']
    text = metrics_with(server, counts)
    for line in counts:
        assert line in text
    assert "ktune_lookup_seconds_count 3" in text
    assert 'ktune_jobs{state="queued"}' in text
    # No GPU runs jobs here (--devices none): the GPU gauges are absent, not 0.
    assert "ktune_gpu_" not in text


def test_metrics_carry_the_build_and_the_process(server):
    version = server.get("/v1/version").json()
    text = server.get("/metrics").body
    build = re.search(r'^ktune_build_info\{version="([^"]+)",api="(\d+)",schema="(\d+)"\} 1$', text, re.M)
    assert build, text
    assert build.groups() == (version["ktune"], str(version["api"]), str(version["schema_version"]))
    values = {}
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                 "process_start_time_seconds", "process_open_fds", "process_max_fds"):
        m = re.search(rf"^# TYPE {name} (counter|gauge)\n{name} (\S+)$", text, re.M)
        assert m, f"{name} missing: {text}"
        values[name] = float(m.group(2))
    assert values["process_cpu_seconds_total"] >= 0
    assert 1 << 20 < values["process_resident_memory_bytes"] < 4 << 30
    assert values["process_virtual_memory_bytes"] >= values["process_resident_memory_bytes"]
    # Started within the last hour (the fixture's server was started for this module).
    assert time.time() - 3600 < values["process_start_time_seconds"] <= time.time() + 1
    assert 3 <= values["process_open_fds"] <= values["process_max_fds"]


def test_unknown_route_and_wrong_method(server):
    a = server.get("/v2/best")
    assert a.status == 404 and error_of(a)["kind"] == "not_found"
    b = server.request("PUT", "/v1/best", body=b"{}")
    assert b.status == 405 and error_of(b)["kind"] == "method_not_allowed"
    # A job id past int64 names no job (it was a 405).
    for target in ("/v1/jobs/1234567890123456789", "/v1/jobs/99999999999999999999999", "/v1/jobs/0"):
        c = server.get(target)
        assert c.status == 404 and error_of(c)["kind"] == "not_found", (target, c.body)


def test_query_server_matches_query_db(server, fixture_db):
    f = expected_facts()
    common = ["--gpu", f["gpu"], "--kernel", "gemm", "--shape", f["exact_shape"], "--dtype", "bf16"]
    local = subprocess.run([KTUNE, "query", "--db", str(fixture_db)] + common, capture_output=True, text=True)
    remote = subprocess.run([KTUNE, "query", "--server", server.url] + common, capture_output=True, text=True)
    assert remote.returncode == 0 and remote.stdout == local.stdout, remote.stderr
    remote_json = subprocess.run([KTUNE, "query", "--server", server.url, "--json"] + common,
                                 capture_output=True, text=True)
    assert json.loads(remote_json.stdout)["config_name"] == f["exact_config"]
    missing = subprocess.run([KTUNE, "query", "--server", server.url, "--no-fallback", "--gpu", f["gpu"],
                              "--kernel", "gemm", "--shape", f["fallback_shape"], "--dtype", "bf16"],
                             capture_output=True, text=True)
    assert missing.returncode == 4, missing.stderr
    bad = subprocess.run([KTUNE, "query", "--server", server.url, "--kernel", "nosuch", "--shape", "m=1",
                          "--dtype", "bf16"], capture_output=True, text=True)
    assert bad.returncode == 2, bad.stderr


def test_cache_push_twice_adds_once(tmp_path, fixture_db, token_file):
    s = Server(["--db", str(tmp_path / "team.db"), "--token-file", str(token_file), "--devices", "none"])
    try:
        push = [KTUNE, "cache", "push", "--server", s.url, "--token-file", str(token_file), "--db",
                str(fixture_db), "--json"]
        first = subprocess.run(push, capture_output=True, text=True)
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["measurements_added"] > 0
        second = subprocess.run(push, capture_output=True, text=True)
        assert json.loads(second.stdout)["measurements_added"] == 0
        no_token = subprocess.run(push[:5] + push[7:], capture_output=True, text=True)
        assert no_token.returncode == 2 and "401" in no_token.stderr
    finally:
        assert s.stop() == 0


def test_listen_backlog_is_raised_above_cpp_httplibs_five(server):
    """64 clients connecting at once must not overflow the kernel's queue of unaccepted connections
    (with cpp-httplib's backlog of 5 they waited 1 s for a SYN retransmit)."""
    if shutil.which("ss") is None:
        pytest.skip("the ss command (iproute2) is missing: it shows a listening socket's backlog")
    port = server.url.rsplit(":", 1)[1]
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    lines = [line.split() for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    # For a listening socket ss shows the backlog in the Send-Q column.
    state, _, backlog = lines[0][:3]
    assert state == "LISTEN"
    somaxconn = int(open("/proc/sys/net/core/somaxconn").read())
    assert int(backlog) == min(1024, somaxconn), out
