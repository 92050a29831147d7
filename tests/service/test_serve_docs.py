"""Every example of docs/service.md, run in order against a server on the fixture database: the
status must be the documented one, and the answer must have the documented shape (see the rules in
the page's "Examples" section)."""

import json
import os
import re

from conftest import TOKEN, expected_facts

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
