"""`ktune serve` security: the token, its file's permissions, the loopback rule, --read-only, body
limits, JSON nesting, names that are never paths, and graceful stop."""

import json
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


def nested(depth):
    return "[" * depth + "]" * depth


def test_json_nested_past_64_levels_is_refused_and_nothing_is_stored(tmp_path, fixture_db, token_file):
    # A push whose first measurement's config is nested 100,000 deep killed the server (recursive
    # serialization); at 10,000 it was stored and the database then failed `ktune cache verify`.
    export = tmp_path / "export.json"
    subprocess.run([KTUNE, "cache", "export", "--db", str(fixture_db), "--out", str(export)], check=True,
                   capture_output=True)
    text = export.read_text()
    db = tmp_path / "pushed.db"
    s = Server(["--db", str(db), "--token-file", str(token_file), "--devices", "none"])
    try:
        doc = json.loads(text)
        assert doc["measurements"], "the fixture export has measurements"
        for depth in (65, 10_000, 100_000):
            doc["measurements"][0]["config"] = "DEEP"
            body = json.dumps(doc).replace('"DEEP"', nested(depth), 1).encode()
            a = s.post("/v1/results", body, token=TOKEN)
            assert a.status == 400, (depth, a.status, a.body[:200])
            assert "deeper than 64" in error_of(a)["message"]
            assert s.get("/v1/health").status == 200  # still answering
        deep_batch = s.post("/v1/best:batch", ('{"keys": ' + nested(1000) + "}").encode())
        assert deep_batch.status == 400 and "deeper than 64" in error_of(deep_batch)["message"]
        deep_job = s.post("/v1/jobs", ('{"kernel": "gemm", "shapes": ' + nested(200) + "}").encode(), token=TOKEN)
        assert deep_job.status == 400 and "deeper than 64" in error_of(deep_job)["message"]
        assert s.get("/v1/results?page_size=1").json()["total"] == 0  # nothing stored
        ok = s.post("/v1/results", text.encode(), token=TOKEN)
        assert ok.status == 200 and ok.json()["measurements_added"] > 0, ok.body
    finally:
        assert s.stop() == 0
    verify = subprocess.run([KTUNE, "cache", "verify", "--db", str(db)], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    deep_file = tmp_path / "deep.json"
    doc["measurements"][0]["config"] = "DEEP"
    deep_file.write_text(json.dumps(doc).replace('"DEEP"', nested(10_000), 1))
    imp = subprocess.run([KTUNE, "cache", "import", "--db", str(tmp_path / "imported.db"), str(deep_file)],
                         capture_output=True, text=True)
    assert imp.returncode == 2 and "deeper than 64" in imp.stderr, (imp.returncode, imp.stderr)


def test_jobs_name_configs_never_files_in_the_working_directory(tmp_path, fixture_db, token_file):
    # Files planted where the server runs: a shape set, a preset and a secret. A job names what the
    # server's configs folder holds; none of these may be opened, nor any of their text answered.
    (tmp_path / "planted_shapes").write_text(
        'kernel = "gemm"\ndims = ["m", "n", "k"]\n[[layer]]\nname = "x"\nm = 1\nn = 8\nk = 8\n')
    (tmp_path / "planted_preset.toml").write_text(
        'description = "planted"\nkernel = "gemm"\ndtypes = ["bf16"]\n[[select]]\nshapes = "qwen3-0.6b"\n')
    (tmp_path / "secret_notes").write_text('password = "hunter2"\n')
    s = Server(["--db", str(fixture_db), "--token-file", str(token_file), "--devices", "none"], cwd=tmp_path)
    try:
        for body, field in (
                ({"kernel": "gemm", "shape_set": "planted_shapes"}, "shape_set"),
                ({"kernel": "gemm", "shape_set": "secret_notes"}, "shape_set"),
                ({"preset": "planted_preset.toml"}, "preset"),
                ({"preset": "planted_preset"}, "preset"),
                ({"kernel": "gemm", "shape_set": "./secret_notes"}, "shape_set")):
            body.update({"compile_only": True, "arch": "sm_90"})
            a = s.post("/v1/jobs", body, token=TOKEN)
            assert a.status == 400, (body, a.body)
            message = error_of(a)["message"]
            assert field in message, (body, message)
            assert "hunter2" not in a.body and "password" not in a.body, a.body
            assert str(tmp_path) not in a.body, a.body
        known = s.post("/v1/jobs", {"kernel": "gemm", "shape_set": "nosuch", "compile_only": True,
                                    "arch": "sm_90"}, token=TOKEN)
        assert known.status == 400 and "qwen3-0.6b" in error_of(known)["message"]  # what the configs hold
        good = s.post("/v1/jobs", {"preset": "quick", "compile_only": True, "arch": "sm_90", "budget": 1},
                      token=TOKEN)
        assert good.status == 201, good.body
        s.request("DELETE", f"/v1/jobs/{good.json()['id']}", token=TOKEN)
    finally:
        assert s.stop() == 0


def test_sigint_stops_cleanly(server):
    assert server.get("/v1/health").status == 200
    assert server.stop(signal.SIGINT) == 0
    assert "stopped" in server.stderr
