"""`ktune serve` security: the token, its file's permissions, the loopback rule, --read-only, body
limits and graceful stop."""

import signal
import subprocess

from conftest import KTUNE, TOKEN, Server, error_of, write_token

EXPORT_LIKE = {"format": "ktune-export", "format_version": 1, "gpus": [], "kernels": [], "runs": [],
               "measurements": [], "best": []}


def test_routes_that_change_need_the_right_token(server):
    missing = server.post("/v1/results", EXPORT_LIKE)
    assert missing.status == 401 and error_of(missing)["kind"] == "unauthorized"
    wrong = server.post("/v1/results", EXPORT_LIKE, token=TOKEN[:-1] + "X")
    assert wrong.status == 401
    shorter = server.post("/v1/results", EXPORT_LIKE, token=TOKEN[:8])
    assert shorter.status == 401
    basic = server.post("/v1/results", EXPORT_LIKE, headers={"Authorization": "Basic " + TOKEN})
    assert basic.status == 401
    right = server.post("/v1/results", EXPORT_LIKE, token=TOKEN)
    assert right.status == 200, right.body
    assert server.post("/v1/jobs", {"kernel": "rmsnorm"}).status == 401
    assert server.request("DELETE", "/v1/jobs/1").status == 401


def test_without_a_token_file_nothing_changes(fixture_db):
    s = Server(["--db", str(fixture_db), "--devices", "none"])
    try:
        a = s.post("/v1/results", EXPORT_LIKE, token=TOKEN)
        assert a.status == 401 and "--token-file" in error_of(a)["message"]
        assert s.get("/v1/health").status == 200
    finally:
        assert s.stop() == 0


def test_read_only_serves_lookups_and_reports_only(fixture_db, token_file):
    s = Server(["--db", str(fixture_db), "--token-file", str(token_file), "--read-only"])
    try:
        assert s.get("/v1/health").json()["read_only"] is True
        assert s.get("/v1/results").status == 200
        assert s.get("/v1/report?format=md").status == 200
        post = s.post("/v1/results", EXPORT_LIKE, token=TOKEN)
        assert post.status == 405 and error_of(post)["kind"] == "read_only"
        job = s.post("/v1/jobs", {"kernel": "rmsnorm"}, token=TOKEN)
        assert job.status == 405
        assert s.get("/v1/jobs").status == 405
    finally:
        assert s.stop() == 0


def run_serve(args):
    return subprocess.run([KTUNE, "serve"] + args, capture_output=True, text=True, timeout=60)


def test_refuses_to_start_unsafely(tmp_path, fixture_db):
    open_to_all = write_token(tmp_path / "open-token", mode=0o644)
    r = run_serve(["--db", str(fixture_db), "--token-file", str(open_to_all)])
    assert r.returncode == 2 and "chmod 600" in r.stderr
    r = run_serve(["--db", str(fixture_db), "--listen", "0.0.0.0:0"])
    assert r.returncode == 2 and "--token-file" in r.stderr
    short = write_token(tmp_path / "short-token", token="abc")
    r = run_serve(["--db", str(fixture_db), "--token-file", str(short)])
    assert r.returncode == 2 and "fewer than" in r.stderr
    r = run_serve(["--db", str(fixture_db), "--listen", "127.0.0.1"])
    assert r.returncode == 2 and "--listen" in r.stderr
    r = run_serve(["--db", str(tmp_path / "none.db"), "--read-only"])
    assert r.returncode == 4, r.stderr


def test_body_and_header_limits(fixture_db, token_file):
    s = Server(["--db", str(fixture_db), "--token-file", str(token_file), "--max-body-bytes", "1000",
                "--devices", "none"])
    try:
        big = s.post("/v1/best:batch", b"{" + b" " * 5000 + b"}")
        assert big.status == 413 and error_of(big)["kind"] == "too_large"
        huge_header = s.get("/v1/health", headers={"X-Filler": "a" * 20000})
        assert huge_header.status in (400, 413, 431)
        assert s.get("/v1/health").status == 200  # still answering
    finally:
        assert s.stop() == 0


def test_sigint_stops_cleanly(server):
    assert server.get("/v1/health").status == 200
    assert server.stop(signal.SIGINT) == 0
    assert "stopped" in server.stderr
