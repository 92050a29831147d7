"""ktune.triton.autotune served by `ktune serve` (no GPU): a database holding winners of the example
RMSNorm for two GPUs (its rows written by `ktune tune --compile-only`, then given random timings and
imported with `ktune cache import`, the fastest config of each key its winner), a real `ktune serve
--read-only` on it, and autotune's look-ups over HTTP: each key served the fastest config as the
test computes it from the random timings, the same as the database file answers; a key the server
has not tuned (404) served the default config and recorded; every other failure (a 400, a 500, a
server that is not there, a URL that is not one) a clear exception."""

import copy
import http.server
import json
import os
import pathlib
import random
import socket
import subprocess
import sys
import threading

import pytest

triton = pytest.importorskip("triton", reason="triton (requirements.txt) is not installed in this environment")

import ktune  # noqa: E402
from ktune import triton as kt  # noqa: E402
from ktune._executable import ktune_executable  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "triton"))
import rmsnorm  # noqa: E402

GPUS = ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]
DESCRIPTION = rmsnorm.rmsnorm_rows.description


class _FakeTensor:
    """Enough of a tensor for a key: a dtype and an element count."""

    def __init__(self, numel, dtype="torch.bfloat16"):
        self._numel, self.dtype = numel, dtype

    def numel(self):
        return self._numel


def _args(rows, n_cols):
    return {"x_ptr": _FakeTensor(rows * n_cols), "w_ptr": _FakeTensor(n_cols), "y_ptr": _FakeTensor(rows * n_cols),
            "n_cols": n_cols, "eps": 1e-6}


def _autotuner(**options):
    return kt.Autotuner(rmsnorm.rmsnorm_rows.fn, DESCRIPTION, key=["n_cols"],
                        dims={"rows": lambda a: a["x_ptr"].numel() // a["n_cols"]}, **options)


def _ktune(*args, check=True):
    done = subprocess.run([ktune_executable(), *map(str, args)], capture_output=True, text=True)
    assert not check or done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """(database path, {(gpu, shape): the winner's point}, the keys' shapes)."""
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    tmp = tmp_path_factory.mktemp("served")
    shapes = sorted({f"rows={rng.randrange(1, 4096)},n_cols={rng.choice([1024, 2048, 3072, 4096])}" for _ in range(3)})
    rmsnorm.rmsnorm_rows.tune(shapes, "bf16", db=tmp / "compiled.db", compile_only=True, root=tmp / "folders")
    _ktune("cache", "export", "--db", tmp / "compiled.db", "--out", tmp / "compiled.json")
    doc = json.loads((tmp / "compiled.json").read_text())
    (gpu,) = doc["gpus"]
    measurements, doc["gpus"], doc["best"], expected = [], [], [], {}
    for g, name in enumerate(GPUS, 1):
        doc["gpus"].append({**gpu, "id": g, "name": name, "memory_bytes": (80 + g) << 30})
        fastest = {}
        for m in doc["measurements"]:
            m = copy.deepcopy(m)
            m.update(id=len(measurements) + 1, gpu_id=g, outcome="ok", reason="")
            med = rng.uniform(5.0, 500.0)
            m["stats"] = {"median_us": med, "min_us": med * 0.97, "mean_us": med * 1.01, "p90_us": med * 1.05,
                          "stdev_us": med * 0.02, "samples": 50}
            measurements.append(m)
            if m["shape"] not in fastest or fastest[m["shape"]]["stats"]["median_us"] > med:
                fastest[m["shape"]] = m
        for shape, m in fastest.items():
            doc["best"].append({"gpu_id": g, "kernel_id": m["kernel_id"], "shape": shape, "dtype": "bf16",
                                "layout": "", "measurement_id": m["id"], "updated_at": m["measured_at"]})
            expected[(name, shape)] = m["config"]["params"]
    doc["measurements"] = measurements
    (tmp / "winners.json").write_text(json.dumps(doc))
    _ktune("cache", "import", "--db", tmp / "winners.db", tmp / "winners.json")
    assert len(expected) == len(GPUS) * len(shapes), f"seed {seed}"
    return tmp / "winners.db", expected, shapes


@pytest.fixture(scope="module")
def server(tuned):
    proc = subprocess.Popen([ktune_executable(), "serve", "--read-only", "--db", str(tuned[0]), "--listen",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.kill()
        pytest.fail(f"ktune serve did not start: {line!r} {proc.stderr.read()!r}")
    yield line.split("listening on ", 1)[1].split(" ", 1)[0]
    proc.terminate()
    assert proc.wait(timeout=60) == 0


def _dims(shape):
    return {k: int(v) for k, v in (kv.split("=") for kv in shape.split(","))}


def test_the_server_and_the_file_serve_each_keys_fastest_config(tuned, server):
    db, expected, shapes = tuned
    for gpu in GPUS:
        served, local = _autotuner(server=server, gpu=gpu), _autotuner(db=str(db), gpu=gpu)
        for shape in shapes:
            want = DESCRIPTION.config_of(expected[(gpu, shape)])
            assert want is not None
            args = _args(**_dims(shape))
            assert served.config_for(args) is want, (gpu, shape)
            assert local.config_for(args) is want, (gpu, shape)
            over_http = ktune.query(DESCRIPTION.name, shape, "bf16", gpu=gpu, server=server, fallback=False)
            from_file = ktune.query(DESCRIPTION.name, shape, "bf16", gpu=gpu, db=str(db), fallback=False)
            assert over_http == from_file
        assert set(served.sources.values()) == {"tuned"}


def test_a_key_the_server_has_not_tuned_is_the_default_and_is_recorded(tuned, server, tmp_path):
    misses = tmp_path / "misses.keys"
    k = _autotuner(server=server, gpu=GPUS[0], record_misses=str(misses))
    assert k.config_for(_args(rows=5, n_cols=4095)) is DESCRIPTION.configs[0]
    assert k.sources == {("rows=5,n_cols=4095", "bf16"): "default"}
    assert kt.read_keys(str(misses)) == [("triton:rmsnorm:rmsnorm_rows", "rows=5,n_cols=4095", "bf16")]
    with pytest.raises(ktune.NotFoundError, match="no tuned config"):
        ktune.query(DESCRIPTION.name, "rows=5,n_cols=4095", "bf16", gpu=GPUS[0], server=server, fallback=False)


def test_a_bad_request_raises_with_the_servers_message(tuned, server):
    shape = tuned[2][0]
    with pytest.raises(ktune.BadInputError, match=r"several GPUs.*HTTP 400"):
        _autotuner(server=server).config_for(_args(**_dims(shape)))  # two GPUs, none named
    with pytest.raises(ktune.BadInputError, match="HTTP 400"):
        ktune.query("gemm", "m=16", "bf16", gpu=GPUS[0], server=server)


class _Failing(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = b'{"error": {"kind": "internal", "message": "the database is locked"}}'
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_failing_or_absent_server_raises(tuned):
    shape = tuned[2][0]
    failing = http.server.HTTPServer(("127.0.0.1", 0), _Failing)
    threading.Thread(target=failing.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{failing.server_address[1]}"
        with pytest.raises(ktune.RuntimeFailure, match=r"the database is locked \(server .*, HTTP 500\)"):
            _autotuner(server=url, gpu=GPUS[0]).config_for(_args(**_dims(shape)))
    finally:
        failing.shutdown()
        failing.server_close()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ktune.RuntimeFailure, match="cannot reach ktune serve"):
        _autotuner(server=f"http://127.0.0.1:{port}", gpu=GPUS[0]).config_for(_args(**_dims(shape)))
    with pytest.raises(ktune.BadInputError, match="not the http"):
        ktune.query(DESCRIPTION.name, shape, "bf16", server="127.0.0.1:8787")


def test_ktune_server_is_the_default_unless_a_database_is_named(server, monkeypatch):
    monkeypatch.setenv("KTUNE_SERVER", server)
    assert _autotuner().server == server
    assert _autotuner(db="x.db").server is None
    with pytest.raises(ktune.BadInputError, match="not both"):
        _autotuner(db="x.db", server=server)
    with pytest.raises(ktune.BadInputError, match="on_miss='tune'"):
        _autotuner(on_miss="tune")
    monkeypatch.delenv("KTUNE_SERVER")
    assert _autotuner().server is None and os.environ.get("KTUNE_SERVER") is None
