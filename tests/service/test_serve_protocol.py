"""`ktune serve` against careless and hostile clients, over raw sockets: bodies the server must not
read (chunked, encoded, unannounced, too large, unauthenticated), headers past the connection's
memory, pipelined and half-closed requests, malformed request lines, and a thousand slow clients
and parked event streams while health keeps answering and SIGTERM still stops the server."""

import resource
import socket
import time

import pytest

from conftest import TOKEN, Server

SMALL_JOB = {"kernel": "rmsnorm", "shapes": ["rows=16,hidden=4096"], "dtype": "f16", "compile_only": True,
             "arch": "sm_90", "strategy": "exhaustive", "budget": 3}


@pytest.fixture
def limited(fixture_db, token_file):
    s = Server(["--db", str(fixture_db), "--token-file", str(token_file), "--max-body-bytes", "1000",
                "--devices", "none"])
    s.port = int(s.url.rsplit(":", 1)[1])
    yield s
    s.stop()


def connect(server, timeout=10):
    return socket.create_connection(("127.0.0.1", server.port), timeout=timeout)


def read_all(sock, timeout=10):
    """Everything the server sends until it closes the connection (or `timeout` passes)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    return data


def read_one_answer(sock, timeout=10):
    """One whole answer (its head and the Content-Length bytes of its body), without waiting for the
    server to close: a half-closed connection may stay open until the server's idle timeout."""
    sock.settimeout(timeout)
    data = b""
    while True:
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            lengths = [int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")]
            if len(body) >= (lengths[0] if lengths else 0):
                return data
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def statuses(data):
    """The status of each answer in `data` (bodies end in a newline, so a status line follows one)."""
    return [int(line.split()[1]) for line in data.split(b"\n") if line.startswith(b"HTTP/1.")]


def exchange(server, raw, timeout=10):
    with connect(server) as s:
        s.sendall(raw)
        return read_all(s, timeout)


def test_bodies_that_are_not_read_are_refused_before_any_byte_of_them(limited):
    t0 = time.time()
    chunked = exchange(limited, b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                b"100000\r\n" + b"x" * 4096)
    assert statuses(chunked) == [411] and b"Content-Length" in chunked
    gzip = exchange(limited, b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
                             b"Content-Length: 10\r\n\r\n0123456789")
    assert statuses(gzip) == [415]
    unannounced = exchange(limited, b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\n\r\n{}")
    assert statuses(unannounced) == [411]
    # A route that changes anything checks the token before reading the (in-limit) body.
    unauthorized = exchange(limited, b"POST /v1/results HTTP/1.1\r\nHost: x\r\nContent-Length: 900\r\n\r\n")
    assert statuses(unauthorized) == [401]
    # Each of these answered at once, never after a read timeout.
    assert time.time() - t0 < 8


def test_a_refused_body_is_never_taken_for_the_next_request(limited):
    smuggled = b"GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n"
    data = exchange(limited, b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n"
                             + smuggled + b" " * (5000 - len(smuggled)))
    assert statuses(data) == [413], data[:300]
    assert b"version" not in data.split(b"\r\n\r\n", 1)[1]


def test_content_length_must_be_one_number(limited):
    # (libmicrohttpd answers this one itself, and closes the connection.)
    assert statuses(exchange(limited, b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n"))[:1] == [400]
    two = exchange(limited, b"POST /v1/best:batch HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n"
                            b"\r\n{}")
    assert statuses(two)[:1] == [400]


def test_headers_past_the_connection_memory_are_refused_and_cost_nothing_after(limited):
    many = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: %s\r\n" % (i, b"a" * 3000)
                                                                for i in range(10_000)) + b"\r\n"
    with connect(limited) as s:
        try:
            s.sendall(many)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the client finished sending
        answer = read_all(s, 5)
    assert statuses(answer) in ([], [413], [431], [400]), answer[:200]
    long_line = b"GET /v1/health?" + b"a" * (1 << 22) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    with connect(limited) as s:
        try:
            s.sendall(long_line)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_all(s, 5)
    assert statuses(answer) in ([], [413], [414], [431], [400])
    assert limited.get("/v1/health").status == 200


def test_pipelined_and_half_closed_requests_are_each_answered(limited):
    one = b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
    with connect(limited) as s:
        s.sendall(one * 4 + b"GET /v1/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = read_all(s)
    assert statuses(data) == [200] * 5
    for _ in range(8):
        with connect(limited) as s:
            s.sendall(b"GET /v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
            s.shutdown(socket.SHUT_WR)
            assert statuses(read_one_answer(s)) == [200]


@pytest.mark.parametrize("line", [b"garbage\r\n\r\n", b"get /v1/health HTTP/1.1\r\nHost: x\r\n\r\n",
                                  b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64])
def test_malformed_request_lines_are_bad_requests(limited, line):
    got = statuses(exchange(limited, line, timeout=5))
    assert got in ([400], []), got  # 400, or the connection closed without an answer
    assert limited.get("/v1/health").status == 200


def test_lines_ended_by_a_bare_lf_are_read_as_http_allows(limited):
    # RFC 9112 2.2: a recipient may take a bare LF for the end of a line; libmicrohttpd does.
    assert statuses(exchange(limited, b"GET /v1/health HTTP/1.1\nHost: x\nConnection: close\n\n")) == [200]


def test_a_nul_in_the_path_finds_no_route(limited):
    # libmicrohttpd hands the path over as a C string: a NUL ends it, so the request is one for
    # "/v1/he", which no route has (404 in the error shape, never a route's answer).
    with connect(limited) as s:
        s.sendall(b"GET /v1/he\x00alth HTTP/1.1\r\nHost: x\r\n\r\n")
        assert statuses(read_one_answer(s, timeout=5)) == [404]


def raise_open_files(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def test_a_thousand_slow_clients_and_parked_streams_starve_nothing(tmp_path, token_file):
    s = Server(["--db", str(tmp_path / "jobs.db"), "--token-file", str(token_file), "--devices", "none"])
    s.port = int(s.url.rsplit(":", 1)[1])
    slow, streams = [], []
    try:
        # Both sides hold a descriptor a connection; the server keeps 256 of its limit for itself.
        want = min(1000, raise_open_files(2200) - 300) // 2
        for _ in range(want):  # one header byte, then nothing: a slow-loris client
            c = connect(s)
            c.sendall(b"G")
            slow.append(c)
        first = s.post("/v1/jobs", SMALL_JOB, token=TOKEN).json()["id"]
        queued = s.post("/v1/jobs", {**SMALL_JOB, "budget": 2}, token=TOKEN).json()["id"]
        for job in [first, queued] * (want // 2):  # streams of a running and a queued job, parked
            c = connect(s)
            c.sendall(b"GET /v1/jobs/%d/events HTTP/1.1\r\nHost: x\r\n\r\n" % job)
            streams.append(c)
        for _ in range(5):
            t0 = time.time()
            assert s.get("/v1/health", timeout=5).status == 200
            assert s.get("/metrics", timeout=5).status == 200
            assert time.time() - t0 < 2, "health and metrics answer within 2 s"
        t0 = time.time()
        code = s.stop(timeout=30)
        assert code == 0, s.stderr[-2000:]
        assert time.time() - t0 < 10, "SIGTERM stops the server within 10 s whatever its clients do"
    finally:
        for c in slow + streams:
            c.close()
        s.stop()
