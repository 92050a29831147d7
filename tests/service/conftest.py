"""Helpers of the `ktune serve` tests: start the real server on an ephemeral loopback port, talk
real HTTP to it (urllib, no third-party client), stop it with SIGTERM.

Environment (set by tests/service/CMakeLists.txt): KTUNE_BIN (the ktune binary), KTUNE_TEST_DB (the
C ABI fixture database: two GPUs, gemm and rmsnorm winners), KTUNE_TEST_EXPECTED (its key=value
facts), KTUNE_SOURCE_DIR (the checkout, for docs/service.md).
"""

import json
import os
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request

import pytest

KTUNE = os.environ.get("KTUNE_BIN", "ktune")
TOKEN = "0123456789abcdef0123456789abcdef"


def expected_facts():
    facts = {}
    with open(os.environ["KTUNE_TEST_EXPECTED"], encoding="utf-8") as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            facts[key] = value
    return facts


def copy_fixture_db(dest):
    """A private copy of the fixture database (SQLite's backup: the WAL is folded in)."""
    src = sqlite3.connect(os.environ["KTUNE_TEST_DB"])
    dst = sqlite3.connect(str(dest))
    src.backup(dst)
    dst.close()
    src.close()
    return dest


def write_token(path, token=TOKEN, mode=0o600):
    path.write_text(token + "\n", encoding="utf-8")
    os.chmod(path, mode)
    return path


class Answer:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


class Server:
    """One `ktune serve` process."""

    def __init__(self, args, env=None, cwd=None):
        self.args = [KTUNE, "serve", "--listen", "127.0.0.1:0"] + args
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env=env, cwd=cwd)
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            self.proc.kill()
            out, err = self.proc.communicate(timeout=30)
            raise AssertionError(f"ktune serve did not start: {line!r} {out!r} {err!r}")
        self.url = line.split("listening on ", 1)[1].split(" ", 1)[0]

    def request(self, method, target, body=None, token=None, headers=None, timeout=60):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        req = urllib.request.Request(self.url + target, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token is not None:
            req.add_header("Authorization", "Bearer " + token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return Answer(r.status, dict(r.headers), r.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as e:
            return Answer(e.code, dict(e.headers), e.read().decode("utf-8", "replace"))

    def get(self, target, **kw):
        return self.request("GET", target, **kw)

    def post(self, target, body, **kw):
        return self.request("POST", target, body=body, **kw)

    def stop(self, sig=signal.SIGTERM, timeout=120):
        if hasattr(self, "stderr"):
            return self.proc.returncode
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            self.stderr = err
            raise AssertionError(f"ktune serve did not stop within {timeout} s: {err}")
        self.stderr = err
        return self.proc.returncode


@pytest.fixture
def fixture_db(tmp_path):
    return copy_fixture_db(tmp_path / "fixture.db")


@pytest.fixture
def token_file(tmp_path):
    return write_token(tmp_path / "token")


@pytest.fixture
def server(fixture_db, token_file):
    s = Server(["--db", str(fixture_db), "--token-file", str(token_file), "--devices", "none"])
    yield s
    assert s.stop() == 0, s.stderr


def error_of(answer):
    doc = answer.json()
    assert set(doc) == {"error"}, doc
    assert set(doc["error"]) == {"kind", "message"}, doc
    return doc["error"]
