"""Every example of docs/service.md, run in order against a server on the fixture database: the
status must be the documented one, and the answer must have the documented shape (see the rules in
the page's "Examples" section)."""

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import urllib.request

from conftest import KTUNE, TOKEN, copy_fixture_db, expected_facts

# The fixture's winners change with its seed; the page shows those of one seed.
DOCUMENTED_WINNERS = {"exact_config": "gemm.bf16.nt.t64.s4", "nn_config": "gemm.bf16.nn.t128.s2"}

# Values compared exactly; other numbers, times and hashes depend on the fixture's random timings.
EXACT_KEYS = {"config_name", "state", "kind", "status", "lane", "kernel", "dtype", "layout", "shape", "gpu",
              "tuned_shape", "fallback", "read_only", "api", "schema_version", "evaluations",
              "evaluations_planned", "keys_done", "keys_total", "outcomes", "page", "page_size", "total",
              "next_page", "measurements_added", "measurements_skipped", "best_updated", "message"}


def examples():
    text = open(os.path.join(os.environ["KTUNE_SOURCE_DIR"], "docs", "service.md"), encoding="utf-8").read()
    text = text[text.index("## Examples"):]
    facts = expected_facts()
    for fact, documented in DOCUMENTED_WINNERS.items():
        assert documented in text, documented
        text = text.replace(documented, facts[fact])
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, re.S)
    pairs = []
    for i, (lang, body) in enumerate(blocks):
        if lang == "http":
            assert i + 1 < len(blocks) and blocks[i + 1][0] in ("json", "text"), body
            pairs.append((body, blocks[i + 1]))
    return pairs


def parse_request(block):
    head, _, body = block.partition("\n\n")
    lines = head.strip().splitlines()
    method, target = lines[0].split(" ", 1)
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(": ")
        headers[k] = v.replace("$TOKEN", TOKEN)
    return method, target, headers, (body.strip().encode() if body.strip() else None)


def matches(expected, actual, key, path):
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        if expected:
            shown = set(expected) - {"..."}
            if "..." in expected:  # the fields shown, and more
                assert shown <= set(actual), (path, sorted(shown), sorted(actual))
            else:
                assert shown == set(actual), (path, sorted(shown), sorted(actual))
            for k in shown:
                v = expected[k]
                matches(v, actual[k], k, f"{path}.{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (path, actual)
        for i, (e, a) in enumerate(zip(expected, actual)):
            matches(e, a, key, f"{path}[{i}]")
    elif expected is None:
        pass  # null: a time or value that the moment decides
    elif isinstance(expected, str) and "..." in expected:
        assert isinstance(actual, str) and actual.startswith(expected.split("...")[0]), (path, actual)
    elif key in EXACT_KEYS:
        assert expected == actual, (path, expected, actual)
    else:
        assert type(expected) is type(actual) or (isinstance(expected, (int, float)) and
                                                  isinstance(actual, (int, float))), (path, actual)


def test_every_documented_example(server):
    pairs = examples()
    assert len(pairs) >= 15
    for request, (lang, answer) in pairs:
        method, target, headers, body = parse_request(request)
        token = None
        if "Authorization" in headers:
            token = headers.pop("Authorization").split(" ", 1)[1]
        status_line, _, expected_body = answer.partition("\n")
        status = int(status_line.split()[1])
        got = server.request(method, target, body=body, token=token, headers=headers)
        assert got.status == status, (method, target, got.status, got.body[:300])
        if lang == "json":
            matches(json.loads(expected_body), json.loads(got.body), "", f"{method} {target}")
        else:
            first = expected_body.strip().splitlines()[0]
            if "..." in first:
                first = first.split("...")[0]
            assert first in got.body, (method, target, first, got.body[:300])


def test_readme_starts_a_server_and_asks_it(tmp_path):
    """README.md's two lines, as written: `ktune serve --db ./h200.db` in a folder holding a one-GPU
    database, and its `curl` (with the shape unescaped) answered with that GPU's winner. Only the
    port differs: the test listens on a free one (8787 may be taken) and sends curl's request there."""
    readme = open(os.path.join(os.environ["KTUNE_SOURCE_DIR"], "README.md"), encoding="utf-8").read()
    block = re.search(r"```sh\n(ktune serve [^\n]*)\n(curl [^\n]*)\n```", readme)
    assert block, "README.md no longer shows the serve command and its curl"
    serve_line, curl_line = block.groups()
    assert serve_line == "ktune serve --db ./h200.db", serve_line
    url = re.fullmatch(r"curl '(http://127\.0\.0\.1:8787(/v1/best\?[^']*))'", curl_line)
    assert url, curl_line
    # A database from one machine's sweep holds one GPU: the fixture's, less every GPU but the one
    # whose winner the curl's key asks.
    db = copy_fixture_db(tmp_path / "h200.db")
    con = sqlite3.connect(str(db))
    con.execute("PRAGMA foreign_keys = ON")
    facts = expected_facts()
    keep = con.execute("SELECT b.gpu_id FROM best b JOIN kernels k ON k.id = b.kernel_id JOIN gpus g ON "
                       "g.id = b.gpu_id WHERE k.name = 'gemm' AND b.shape = ? AND b.dtype = 'bf16' AND "
                       "b.layout = 'nt' AND g.name = ?", (facts["exact_shape"], facts["gpu"])).fetchone()[0]
    con.execute("DELETE FROM gpus WHERE id <> ?", (keep,))
    con.commit()
    con.close()
    args = serve_line.split()[1:] + ["--listen", "127.0.0.1:0", "--devices", "none"]
    proc = subprocess.Popen([KTUNE] + args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.poll() else "")
        base = line.split("listening on ", 1)[1].split(" ", 1)[0]
        target = base + url.group(2)
        if shutil.which("curl"):
            body = subprocess.run(["curl", "-s", "-f", target], capture_output=True, text=True, check=True,
                                  timeout=60).stdout
        else:
            with urllib.request.urlopen(target, timeout=60) as r:
                body = r.read().decode()
        answer = json.loads(body)
        assert answer["config_name"] == facts["exact_config"], answer
        assert answer["shape"] == "m=16,n=4096,k=4096" and answer["fallback"] is False
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
