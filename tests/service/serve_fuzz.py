"""Fuzz `ktune serve` with generated requests: malformed JSON, wrong types, huge and missing fields,
invalid UTF-8, path traversal in parameters, oversized bodies and headers, slow and truncated
clients. Every request must get an HTTP status (never a dropped connection without one, except the
deliberately truncated ones), the server must keep answering and exit 0 on SIGTERM (under ASan: no
leak, no error), and its resident memory after the run must stay within 20 % of what it was after
the first half of the run (which fills the database page caches).

Usage: serve_fuzz.py [--requests N] [--seed S]   (env: KTUNE_BIN, KTUNE_TEST_DB)
"""

import argparse
import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

KTUNE = os.environ.get("KTUNE_BIN", "ktune")
TOKEN = "fuzz-token-0123456789abcdef0123"

PATHS = ["/v1/best", "/v1/best:batch", "/v1/results", "/v1/report", "/v1/jobs", "/v1/jobs/1", "/v1/jobs/1/events",
         "/v1/health", "/v1/version", "/v1/devices", "/metrics", "/", "/v1/../../etc/passwd", "/v1/best/../results",
         "/%2e%2e/%2e%2e/etc/passwd", "/v1/jobs/99999999999999999999", "/v1/jobs/-1"]
WORDS = ["gemm", "rmsnorm", "bf16", "f16", "nt", "nn", "m=16,n=4096,k=4096", "rows=16,hidden=4096", "../../etc/passwd",
         "/etc/shadow", "'; DROP TABLE best; --", "%00", "\u00e9\u4e2d", "m=-1", "m=99999999999999999999", "", " ",
         "true", "false", "csv", "html", "json", "md", "pdf", "Test GPU Alpha", "sm_90", "$(reboot)", "`id`"]
PARAMS = ["gpu", "kernel", "shape", "dtype", "layout", "fallback", "format", "page", "page_size", "since", "limit",
          "winners", "x"]


def random_text(rng):
    choice = rng.random()
    if choice < 0.6:
        return rng.choice(WORDS)
    if choice < 0.8:
        return "".join(chr(rng.randint(32, 0x2FF)) for _ in range(rng.randint(0, 40)))
    if choice < 0.95:
        return "A" * rng.randint(1000, 3000)
    return "".join(chr(rng.randint(0, 31)) for _ in range(5))


def random_json(rng, depth=0):
    r = rng.random()
    if depth > 3 or r < 0.3:
        return rng.choice([None, True, False, 0, -1, 2 ** 63, 1e308, -0.5, random_text(rng), [], {}])
    if r < 0.6:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    keys = ["keys", "kernel", "kernels", "shape", "shapes", "dtype", "layout", "gpu", "fallback", "preset",
            "shape_set", "budget", "strategy", "arch", "device", "format", "gpus", "runs",
            "measurements", "best", "format_version", "seed"]
    # No "compile_only": with --devices none every job is then refused (503), so the run stays a run of
    # requests, not of NVRTC compiles.
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 6))}


def random_body(rng):
    r = rng.random()
    if r < 0.4:
        return json.dumps(random_json(rng)).encode()
    if r < 0.55:
        return json.dumps({"keys": [random_json(rng) for _ in range(rng.randint(0, 30))]}).encode()
    if r < 0.65:
        return json.dumps({"format": "ktune-export", "format_version": rng.choice([1, 2, "1", None]),
                           "gpus": random_json(rng), "kernels": [random_json(rng)], "runs": random_json(rng),
                           "measurements": [random_json(rng)], "best": random_json(rng)}).encode()
    if r < 0.75:
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 200)))  # invalid UTF-8, not JSON
    if r < 0.85:
        return b'{"keys": [' + b'{"kernel": "gemm"},' * rng.randint(1, 50)  # truncated JSON
    return b"{" * rng.randint(1, 5000)  # deep nesting


def query(rng):
    from urllib.parse import quote
    parts = []
    for _ in range(rng.randint(0, 6)):
        parts.append(f"{rng.choice(PARAMS)}={quote(random_text(rng), safe='')}")
    if rng.random() < 0.05:
        parts.append("x=%FF%FE%00")  # percent-encoded invalid UTF-8 and NUL
    return ("?" + "&".join(parts)) if parts else ""


def keep_alive_request(conn, rng):
    method = rng.choice(["GET", "GET", "GET", "POST", "POST", "DELETE", "PUT", "PATCH"])
    path = rng.choice(PATHS)
    if path.endswith("/events"):
        path = "/v1/jobs/99999/events"  # a stream of a job that does not exist: 404, not a wait
    headers = {}
    if rng.random() < 0.5:
        headers["Authorization"] = rng.choice(["Bearer " + TOKEN, "Bearer wrong", "Basic abc", "Bearer ", "x" * 500])
    body = random_body(rng) if method in ("POST", "PUT", "PATCH") else None
    if body is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path + query(rng), body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    if r.status >= 400:
        if data:
            doc = json.loads(data)
            assert "error" in doc and "message" in doc["error"], data[:200]
    return r.status


def raw_request(port, rng):
    """A malformed or abusive request on its own connection; returns the status or None."""
    kind = rng.randint(0, 5)
    s = socket.create_connection(("127.0.0.1", port), timeout=15)
    try:
        if kind == 0:
            payload = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"
        elif kind == 1:
            payload = b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999999\r\n\r\n{}"
        elif kind == 2:
            payload = bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 300))) + b"\r\n\r\n"
        elif kind == 3:
            payload = b"GET /v1/health HTTP/1.1\r\n" + b"".join(b"H%d: v\r\n" % i for i in range(300)) + b"\r\n"
        elif kind == 4:
            payload = b"GET /\xff\xfe/v1/best?kernel=\xc3\x28 HTTP/1.1\r\nHost: x\r\n\r\n"
        else:
            # A slow client: the request line in pieces.
            for piece in (b"GET /v1/hea", b"lth HTTP/1.1\r\nHo", b"st: x\r\n\r\n"):
                s.sendall(piece)
                time.sleep(0.01)
            payload = b""
        if payload:
            s.sendall(payload)
        data = s.recv(4096)
        if not data:
            return None
        line = data.split(b"\r\n", 1)[0].split()
        return int(line[1]) if len(line) > 1 and line[1].isdigit() else None
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        return None
    finally:
        s.close()


def rss_kib(pid):
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run_batch(port, rng, count, statuses):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for i in range(count):
        if rng.random() < 0.08:
            status = raw_request(port, rng)
            statuses[status] = statuses.get(status, 0) + 1
            continue
        try:
            status = keep_alive_request(conn, rng)
        except (http.client.HTTPException, ConnectionError, OSError):
            # The server may close a connection after an error answer; a new one must work.
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/v1/health")
            r = conn.getresponse()
            r.read()
            assert r.status == 200, f"the server stopped answering after request {i}"
            status = "reconnected"
        statuses[status] = statuses.get(status, 0) + 1
    conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "fuzz.db")
        src = sqlite3.connect(os.environ["KTUNE_TEST_DB"])
        dst = sqlite3.connect(db)
        src.backup(dst)
        dst.close()
        src.close()
        token = os.path.join(tmp, "token")
        with open(token, "w", encoding="ascii") as f:
            f.write(TOKEN)
        os.chmod(token, 0o600)
        env = dict(os.environ)
        # A small ASan quarantine, so that freed memory is reused and RSS measures what is live.
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=16").lstrip(":")
        proc = subprocess.Popen([KTUNE, "serve", "--listen", "127.0.0.1:0", "--db", db, "--token-file", token,
                                 "--devices", "none", "--threads", "8", "--max-body-bytes", "65536"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = proc.stdout.readline()
        assert "listening on " in line, line + proc.stderr.read()
        port = int(line.split("listening on ", 1)[1].split()[0].rsplit(":", 1)[1])
        statuses = {}
        # The first half fills the database page caches (a few MiB over the reader handles) and the
        # allocator's pools; the second half must not grow it further beyond noise.
        half = max(args.requests // 2, 1)
        run_batch(port, rng, half, statuses)
        rss_warm = rss_kib(proc.pid)
        run_batch(port, rng, args.requests - half, statuses)
        rss_end = rss_kib(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
        print(f"{args.requests} requests; statuses {dict(sorted(statuses.items(), key=str))}")
        print(f"RSS after the first half {rss_warm} KiB, after the run {rss_end} KiB; exit {proc.returncode}")
        failures = []
        if proc.returncode != 0:
            failures.append(f"ktune serve exited {proc.returncode}: {err[-3000:]}")
        if "ERROR: AddressSanitizer" in err or "runtime error:" in err:
            failures.append("sanitizer report:\n" + err[-3000:])
        if rss_end > rss_warm * 1.2 + 4096:
            failures.append(f"RSS grew from {rss_warm} KiB to {rss_end} KiB")
        answered = sum(n for s, n in statuses.items() if isinstance(s, int))
        if answered < args.requests * 0.9:
            failures.append(f"only {answered} of {args.requests} requests got a status")
        if failures:
            print("\n".join(failures))
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
