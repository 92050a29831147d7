"""The dashboard `GET /`: a self-contained page (nothing fetched from elsewhere) that, in headless
Chromium, shows the GPUs, the jobs with progress that moves while a compile-only job runs, the latest
winners with names from the database shown as text (never as markup), and links to the reports; on a
--read-only server too; with no console error or uncaught exception."""

import re
import sqlite3
import time

import pytest

from conftest import TOKEN, Server
from headless_browser import Browser, find_chromium

# A compile-only job long enough to be watched: 40 NVRTC compiles on one thread.
LONG_JOB = {"kernel": "gemm", "shapes": ["m=16,n=4096,k=4096"], "dtype": "bf16", "compile_only": True,
            "arch": "sm_90", "strategy": "exhaustive", "budget": 40}
# Names a user could choose, that would run script if the page ever parsed them as markup.
HOSTILE_CONFIG = 'gemm.<img src=x onerror="window.__pwned=1">&amp;</td>'
HOSTILE_GPU = "Test GPU <script>window.__pwned=2</script>"

JOB_ROWS = """Array.from(document.querySelectorAll('#jobs tr[data-job-id]')).map(function (r) {
  return {id: Number(r.dataset.jobId), state: r.dataset.state, evaluations: Number(r.dataset.evaluations),
          shown: r.querySelector('.job-evaluations').textContent};
})"""


@pytest.fixture
def chromium():
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium not found (install: scripts/install-deps.sh --with-browser, or set KTUNE_CHROMIUM)")
    return binary


def wait_until(browser, expression, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = browser.evaluate(expression)
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"the page never satisfied {expression}; problems: {browser.problems()}")


def test_the_page_is_self_contained_and_its_links_answer(server):
    page = server.get("/")
    assert page.status == 200 and page.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["Content-Security-Policy"]
    html = page.body
    assert "<script>" in html and "<style>" in html  # inline, not fetched
    assert not re.search(r"\bsrc\s*=", html), "the page loads a script or image from a file"
    assert "https://" not in html and "http://" not in html and "//cdn" not in html
    links = re.findall(r'href="(/[^"]*)"', html)
    assert {"/v1/report?format=html", "/v1/report?format=md", "/v1/report?format=csv",
            "/v1/report?format=json", "/metrics"} <= set(links)
    for link in links:
        assert server.get(link).status == 200, link


def test_the_browser_sees_console_errors_and_exceptions(chromium, tmp_path, server):
    """The checks below that find no problem would pass vacuously if problems were never seen."""
    with Browser(chromium, tmp_path) as browser:
        browser.navigate(server.url + "/")
        wait_until(browser, "document.querySelectorAll('#winners tr').length")
        assert browser.problems() == []
        browser.evaluate("console.error('probe-error'); setTimeout(function () { throw new Error('probe-throw'); }); 1")
        deadline = time.time() + 30
        while time.time() < deadline and len(browser.problems()) < 2:
            time.sleep(0.1)
        problems = " ".join(browser.problems())
        assert "probe-error" in problems and "probe-throw" in problems, problems


def test_progress_moves_while_a_compile_only_job_runs(chromium, tmp_path, token_file):
    s = Server(["--db", str(tmp_path / "jobs.db"), "--token-file", str(token_file), "--devices", "none"])
    try:
        job = s.post("/v1/jobs", LONG_JOB, token=TOKEN)
        assert job.status == 201, job.body
        job_id = job.json()["id"]
        with Browser(chromium, tmp_path) as browser:
            browser.navigate(s.url + "/")
            seen = set()  # evaluation counts the page showed while the job ran
            deadline = time.time() + 240
            while time.time() < deadline and len(seen) < 3:
                for r in browser.evaluate(JOB_ROWS):
                    if r["id"] != job_id:
                        continue
                    if r["state"] == "running" and r["shown"] != "not started":
                        assert r["shown"] == f"{r['evaluations']} / 40", r  # budget 40: 40 planned
                        seen.add(r["evaluations"])
                    assert r["state"] in ("queued", "running"), f"the job ended before it was watched: {r}"
                time.sleep(0.1)
            assert len(seen) >= 3, f"the page's progress did not move: {sorted(seen)}"
            # What the page showed, the server had counted.
            assert max(seen) <= s.get(f"/v1/jobs/{job_id}").json()["progress"]["evaluations"]
            # The job's end reaches the page too.
            assert s.request("DELETE", f"/v1/jobs/{job_id}", token=TOKEN).status == 200
            ended = wait_until(browser, f"(function () {{ var r = document.querySelector('#jobs tr[data-job-id=\"{job_id}\"]');"
                                        " return r && r.dataset.state === 'cancelled' ? r.dataset.state : null; })()",
                               timeout=120)
            assert ended == "cancelled"
            devices = s.get("/v1/devices").json()
            gpus_text = browser.evaluate("document.getElementById('gpus').textContent")
            if devices["available"]:
                assert browser.evaluate("document.querySelectorAll('#gpus tr').length") == len(devices["devices"]) + 1
            else:
                assert devices["reason"] in gpus_text
            assert browser.evaluate("window.__ktuneErrors") == []
            assert browser.problems() == []
    finally:
        assert s.stop() == 0, s.stderr


def test_read_only_server_shows_winners_as_text(chromium, tmp_path, fixture_db, token_file):
    db = sqlite3.connect(str(fixture_db))
    winner = db.execute("SELECT measurement_id FROM best ORDER BY measurement_id LIMIT 1").fetchone()[0]
    db.execute("UPDATE measurements SET config_name = ? WHERE id = ?", (HOSTILE_CONFIG, winner))
    db.execute("UPDATE gpus SET name = ? WHERE id = (SELECT MIN(id) FROM gpus)", (HOSTILE_GPU,))
    winners = db.execute("SELECT COUNT(*) FROM best").fetchone()[0]
    db.commit()
    db.close()
    s = Server(["--db", str(fixture_db), "--token-file", str(token_file), "--read-only"])
    try:
        with Browser(chromium, tmp_path) as browser:
            browser.navigate(s.url + "/")
            rows = wait_until(browser, "document.querySelectorAll('#winners tr').length")
            assert rows == min(winners, 25) + 1  # a header row, then one a winner
            names = browser.evaluate("Array.from(document.querySelectorAll('#winners code')).map(c => c.textContent)")
            assert HOSTILE_CONFIG in names
            cells = browser.evaluate("Array.from(document.querySelectorAll('#winners td')).map(c => c.textContent)")
            assert HOSTILE_GPU in cells
            assert browser.evaluate("document.querySelectorAll('#winners img, #winners script').length") == 0
            assert browser.evaluate("window.__pwned === undefined")
            assert "--read-only" in browser.evaluate("document.getElementById('jobs').textContent")
            assert browser.evaluate("document.getElementById('read-only').textContent") == "read-only"
            assert browser.evaluate("window.__ktuneErrors") == []
            assert browser.problems() == []
    finally:
        assert s.stop() == 0, s.stderr
