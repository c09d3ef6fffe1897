"""A running app for browser tests: a fresh store, `streamlit run` on a free port, chromium.

One streamlit process and one browser per test module; each test gets a fresh page.
Expected figures come from `annotate status --json`, read before the app takes the lock.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# How long a page waits for what a test expects, in every context the `browser` fixture opens:
# a first visit to Calibration took 11 s on a quiet machine and over 30 s (Playwright's default)
# with three workers on two loaded cores. A test that passes waits no longer for it.
WAIT_MS = 90_000

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HEALTH_TIMEOUT = 60.0
CLI_TIMEOUT = 120.0
LEAD = ("lena", "lead passphrase")
XSS_TRACE = {
    "trace_id": "xss-1",
    # Its own feature: the Trace box lists only the first 500 ids, and "xss-1" sorts last.
    "feature": "xss_probe",
    "response": '<img src=x onerror="window.__xss=1"> and <script>window.__xss=2</script>',
    "context": ["doc"],
}


def annotate_cli(*args: str, db: Path, stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> str:
    """The installed `annotate` command, run from the repo root like a user would; its stdout."""
    result = _annotate(*args, db=db, stdin=stdin, ok=ok)
    return result.stdout


def _annotate(
    *args: str, db: Path, stdin: str | None = None, ok: tuple[int, ...] = (0,)
) -> subprocess.CompletedProcess[str]:
    """The installed `annotate` command, run from the repo root like a user would."""
    command = [str(Path(sys.executable).with_name("annotate")), *args, "--db", str(db)]
    result = subprocess.run(
        command,
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert result.returncode in ok, (
        f"{' '.join(command)} exited {result.returncode}:\n{result.stderr}"
    )
    return result


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _is_healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except (urllib.error.URLError, OSError):
        return False


def _wait_until_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"streamlit exited {process.returncode}:\n{log.read_text()}")
        if _is_healthy(url):
            return
        time.sleep(0.2)
    pytest.fail(f"streamlit not healthy after {HEALTH_TIMEOUT:.0f} s:\n{log.read_text()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Streamlit runs in its own session, so its group holds it and anything it started."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def chromium() -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests drive Debian's chromium, and {CHROMIUM} is not installed")
    return CHROMIUM


@pytest.fixture(scope="module")
def lead() -> tuple[str, str]:
    """Name and password of the lead account `app_store` creates."""
    return LEAD


@pytest.fixture(scope="module")
def xss_trace() -> dict[str, Any]:
    return dict(XSS_TRACE)


@pytest.fixture(scope="module")
def app_store(
    tmp_path_factory: pytest.TempPathFactory, bundled_store: Path, xss_trace: dict[str, Any]
) -> Path:
    """`annotate init` (the bundled sample: a copy of the session's), one trace whose response
    is live HTML, a lead."""
    folder = tmp_path_factory.mktemp("browser")
    db = folder / "a.duckdb"
    shutil.copyfile(bundled_store, db)
    rows = folder / "xss.jsonl"
    rows.write_text(json.dumps(xss_trace) + "\n", encoding="utf-8")
    _annotate("import", str(rows), db=db)
    name, password = LEAD
    _annotate("user", "add", name, "--role", "lead", db=db, stdin=password + "\n")
    return db


@pytest.fixture(scope="module")
def expected_status(app_store: Path) -> dict[str, Any]:
    """Read before the app starts: a running app holds the store's write lock."""
    status: dict[str, Any] = json.loads(_annotate("status", "--json", db=app_store).stdout)
    return status


@contextmanager
def running_app(db: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """`streamlit run app.py` on `db` and a free port, stopped (and the store free) on exit;
    `env`: added to the app's environment."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = db.with_name(f"streamlit-{port}.log")
    command = [
        *(sys.executable, "-m", "streamlit", "run", "app.py"),
        *("--server.headless", "true", "--server.port", str(port)),
        *("--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"),
        # Others edit the repo while tests run; a changed file must not rerun the page.
        *("--server.fileWatcherType", "none"),
    ]
    env = {**os.environ, "ANNOTATE_DB": str(db), **(env or {})}
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        _wait_until_healthy(url, process, log)
        yield url
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def app_url(chromium: Path, app_store: Path, expected_status: dict[str, Any]) -> Iterator[str]:
    with running_app(app_store) as url:
        yield url


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        new_context = launched.new_context

        def patient_context(*args: Any, **kwargs: Any) -> Any:
            context = new_context(*args, **kwargs)
            context.set_default_timeout(WAIT_MS)
            return context

        launched.new_context = patient_context
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any, app_url: str) -> Iterator[Any]:
    context = browser.new_context(base_url=app_url, viewport={"width": 1400, "height": 1000})
    opened = context.new_page()
    yield opened
    context.close()


def wait_for_session(page: Any) -> None:
    """The app sets its session cookie from a script right after sign-in; a page load before
    that would start signed out, as it would for a person that quick."""
    page.wait_for_function("document.cookie.includes('annotate_session=')")


def upload_file(page: Any, path: Path, timeout: int = 120_000) -> None:
    """Put `path` in the page's upload box and wait until the app has it. The box shows the
    file's name as soon as it is chosen, while its bytes are still on their way (an HTTP PUT);
    a press on Import before the PUT is answered reran the page with an empty box, and the
    test waited a minute for a summary that never came (seen on a loaded CI machine)."""

    def is_upload(response: Any) -> bool:
        return "/_stcore/upload_file/" in response.url and response.request.method == "PUT"

    with page.expect_response(is_upload, timeout=timeout) as answer:
        page.locator("input[type='file']").set_input_files(str(path))
    assert answer.value.ok, (answer.value.status, path.name)
    page.get_by_text(path.name).first.wait_for()
    page.locator("[data-testid='stStatusWidget']").wait_for(state="detached", timeout=timeout)


class Runs:
    """The app's script runs as the page's websocket carries them: a run is pending from the
    page's request until the server says it finished (its text alone may be the last run's).
    Made by `Runs.opening(page, path)`, on the socket of that page load."""

    @classmethod
    def opening(cls, page: Any, path: str) -> Runs:
        """Go to `path` and follow the runs of the session that load opens."""
        with page.expect_websocket() as opened:
            page.goto(path)
        return cls(opened.value)

    def __init__(self, socket: Any) -> None:
        self.pending = False
        socket.on("framesent", self._sent)
        socket.on("framereceived", self._received)
        self.socket = socket

    @staticmethod
    def is_request(payload: bytes | str) -> bool:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        return isinstance(payload, bytes) and BackMsg.FromString(payload).HasField("rerun_script")

    def _sent(self, payload: bytes | str) -> None:
        self.pending = self.pending or self.is_request(payload)

    def _received(self, payload: bytes | str) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if isinstance(payload, bytes):
            message = ForwardMsg.FromString(payload)
            # a run stopped early for the next request is not the end of that request's run
            done = message.WhichOneof("type") == "script_finished"
            if done and message.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                self.pending = False

    def after(self, action: Any) -> None:
        """Do `action` (a click, a sign-in) and wait until the run it asked for has ended
        (events are only dispatched inside Playwright calls, so none slips between the check
        and the wait), where a fixed wait guessed how long a run takes on a loaded machine."""
        with self.socket.expect_event("framesent", predicate=self.is_request):
            action()
        if self.pending:
            self.socket.wait_for_event("framereceived", predicate=lambda _: not self.pending)
