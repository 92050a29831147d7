"""Debian's chromium, headless, driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
JSON messages ended by a NUL byte, commands on fd 3, answers and events on fd 4), so a test can load
a page and read its DOM again and again while the page runs in real time, and collect every console
message and uncaught exception the page produced. Standard library only.

The HTML report's browser test (tests/reports/headless_chromium.hpp) dumps the DOM once after a
virtual-time budget; the dashboard needs real time, since the job it shows runs on the server.
"""

import fcntl
import json
import os
import shutil
import subprocess
import threading


def find_chromium():
    """$KTUNE_CHROMIUM, else chromium / chromium-browser / google-chrome on PATH; None if absent."""
    env = os.environ.get("KTUNE_CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _moved_above(fd, lowest):
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, lowest)
    os.close(fd)
    return high


class Browser:
    """One headless chromium with one page. Use as a context manager."""

    def __init__(self, binary, work_dir, timeout=60):
        self.timeout = timeout
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        # Above 4, so the shell's redirections below cannot overwrite one end with another.
        to_browser_read = _moved_above(to_browser_read, 10)
        from_browser_write = _moved_above(from_browser_write, 10)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-proxy-server",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--no-default-browser-check",
                # Nothing but this machine's loopback can be reached.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                f"--user-data-dir={work_dir}/profile", "--window-size=1280,1600",
                "--remote-debugging-pipe", "about:blank"]
        # bash (dash takes no descriptor above 9) puts the pipe ends where chromium expects them (3:
        # commands in, 4: answers and events out).
        script = f'exec "$0" "$@" 3<&{to_browser_read} 4>&{from_browser_write} {to_browser_read}<&- {from_browser_write}>&-'
        self._log = open(os.path.join(str(work_dir), "chromium.log"), "wb")
        self.proc = subprocess.Popen(["bash", "-c", script, binary] + args, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=self._log,
                                     pass_fds=(to_browser_read, from_browser_write))
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._next_id = 0
        self._answers = {}
        self._cond = threading.Condition()
        self._closed = False
        self.console = []     # (type, text) of every console call
        self.exceptions = []  # text of every uncaught exception
        self.log_entries = []  # (level, text) of the browser's own log (failed loads, CSP, ...)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
                self.call(domain, session=True)
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _read(self):
        buffer = b""
        while True:
            chunk = os.read(self._from_browser, 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                self._dispatch(json.loads(raw))
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _dispatch(self, msg):
        method = msg.get("method")
        params = msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append((params.get("type"), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            self.exceptions.append(details.get("exception", {}).get("description") or details.get("text"))
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            self.log_entries.append((entry.get("level"), entry.get("text")))
        if "id" in msg:
            with self._cond:
                self._answers[msg["id"]] = msg
                self._cond.notify_all()

    def call(self, method, params=None, session=False):
        """Sends one DevTools command and waits for its answer; raises on a protocol error."""
        with self._cond:
            self._next_id += 1
            ident = self._next_id
        msg = {"id": ident, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: ident in self._answers or self._closed, timeout=self.timeout):
                raise AssertionError(f"chromium did not answer {method} within {self.timeout} s")
            if ident not in self._answers:
                raise AssertionError(f"chromium exited before answering {method}")
            answer = self._answers.pop(ident)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def navigate(self, url):
        result = self.call("Page.navigate", {"url": url}, session=True)
        if result.get("errorText"):
            raise AssertionError(f"cannot load {url}: {result['errorText']}")

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self):
        """Console errors and warnings, uncaught exceptions and the browser's error log lines."""
        return ([f"console.{t}: {x}" for t, x in self.console if t in ("error", "warning", "assert")] +
                [f"exception: {x}" for x in self.exceptions] +
                [f"log {lvl}: {x}" for lvl, x in self.log_entries if lvl in ("error", "warning")])

    def close(self):
        if self.proc.poll() is None:
            try:
                self.call("Browser.close")
            except (AssertionError, OSError):
                pass  # it is already going
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self._to_browser)
        self._reader.join(timeout=5)
        os.close(self._from_browser)
        self._log.close()
