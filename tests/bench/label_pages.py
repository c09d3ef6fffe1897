"""The Label page's benches' shared parts: a store as a team has it, a Streamlit server of the
app or of a bare counter app, and chromium pages that sign in, press a key and see the next
claim drawn (bench_label_latency, bench_label_load, tests/browser/test_label_load_browser)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from annotate.accounts.users import add_user
from annotate.claims.extraction import create_claims
from annotate.ingest.importer import import_traces
from annotate.labelling.assignment import assign
from annotate.labelling.session import set_min_dwell
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from tests.bench.synthetic import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "bench passphrase"
COOKIE = "annotate_session"  # ui.COOKIE (ui imports streamlit; the benches drive it from outside)
REVIEWERS = [f"r{i}" for i in range(1, 6)]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BARE_APP = """
import streamlit as st
st.session_state.setdefault("n", 0)
if st.button("Next", shortcut="1"):
    st.session_state.n += 1
st.markdown(f"<div class='bare-count'>count {st.session_state.n}</div>", unsafe_allow_html=True)
"""

# The bare app drawing what a claim's area must show (issue 38's one-reviewer figure): the same
# claims' boxes, details lines and context panes as the Label page draws them (HTML made by
# widgets.claim_display from the store, in ANNOTATE_BENCH_CONTENT), in the same two columns of
# a wide page, in a fragment, a button with shortcut "1" moving to the next claim; none of the
# page's controls, checks or store. What a press costs beyond the bare counter here is the
# content's own cost; what the Label page costs beyond this is its controls and checks.
CONTENT_APP = """
import json, os
import streamlit as st
st.set_page_config(layout="wide")
claims = json.loads(open(os.environ["ANNOTATE_BENCH_CONTENT"], encoding="utf-8").read())
st.session_state.setdefault("n", 0)

def bump():
    st.session_state.n += 1

@st.fragment
def area():
    n = st.session_state.n
    shown = claims[n % len(claims)]
    left, right = st.columns([5, 6], gap="medium")
    with left:
        st.html(shown["claim"])
        st.button("Next", shortcut="1", on_click=bump)
    with right:
        st.html(shown["context"])

area()
"""


def content_pages(db: Path, reviewer: str, sample: str, count: int) -> list[dict[str, str]]:
    """The first `count` claims of `reviewer`'s queue as the Label page draws them (CONTENT_APP):
    the progress line, the claim box with its details, and the context pane."""
    from annotate.labelling.session import claim_view, reviewer_queue
    from widgets.claim_display import (
        LABEL_CONTEXT_HEIGHT,
        claim_box_html,
        context_pane_html,
        progress_html,
    )

    store = open_store(db, read_only=True)
    try:
        found = []
        for done, item in enumerate(reviewer_queue(store, reviewer, sample)[:count]):
            view = claim_view(store, item["trace_id"], item["claim_index"])
            details = view.details()
            progress = progress_html(done, count, f"{done} / {count} claims done in {sample}")
            found.append(
                {
                    "claim": progress + claim_box_html(view, details),
                    "context": context_pane_html(view, details, LABEL_CONTEXT_HEIGHT),
                }
            )
        return found
    finally:
        store.close()


def fill_store(db: Path, count: int, sample: int, reviewers: list[str] = REVIEWERS) -> None:
    """A store as a team would have it: imported traces, a sample, claims, its reviewers
    (each assigned every trace of the sample)."""
    store = open_store(db)
    source = db.with_suffix(".jsonl")
    write_jsonl(source, count)
    report = import_traces(store, source, fmt="jsonl", actor="bench")
    source.unlink()
    if not report.is_clean:
        raise RuntimeError(f"the generated file did not import cleanly: {report.counts()}")
    draw_sample(store, SampleSpec(name="bench", n=sample, by=("feature",), seed=1))
    create_claims(store, "bench", extractor="sentences", actor="bench")
    set_min_dwell(store, 0, actor="bench")  # the bench presses as fast as the page allows
    for name in reviewers:
        add_user(store, name, "reviewer", PASSWORD)
    assign(store, "bench", reviewers, per_trace=len(reviewers), seed=1)
    store.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_streamlit(
    script: Path,
    db: Path | None,
    launcher: tuple[str, ...] = ("-m", "streamlit"),
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """The app runs from the repository (its .streamlit/config.toml); the bare app from its
    own folder, so the baseline is Streamlit with its default settings. `launcher`: what runs
    Streamlit's command line (`-c CODE` that calls it after a bench's changes); `env`: added."""
    port = free_port()
    env = {**os.environ, **({"ANNOTATE_DB": str(db)} if db else {}), **(env or {})}
    process = subprocess.Popen(
        [
            sys.executable,
            *launcher,
            "run",
            str(script),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT if db else script.parent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().strip() == b"ok":
                    return process, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"streamlit {script} did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=20)


async def open_label(browser, url: str, reviewer: str, password: str = PASSWORD, hook=None):
    """A fresh browser context signed in as `reviewer`, on the Label page's first claim;
    `hook(page)` runs before the page opens (a websocket listener hears it from the start)."""
    page = await (await browser.new_context(viewport={"width": 1400, "height": 1000})).new_page()
    page.set_default_timeout(60_000)
    if hook is not None:
        hook(page)
    await page.goto(url)
    await page.get_by_label("User name").fill(reviewer)
    await page.get_by_label("Password", exact=True).fill(password)
    await page.get_by_label("Password", exact=True).press("Enter")
    await page.get_by_text(f"Signed in as {reviewer}").wait_for()
    await page.locator("[data-testid='stPageLink-NavLink']", has_text="Label").click()
    try:
        await page.locator(".annotate-claim").wait_for()
    except Exception:
        await page.screenshot(path=f"/tmp/label-latency-{reviewer}.png", full_page=True)
        raise
    return page


# The next claim is on screen and the rerun has drawn everything under it: no element of the
# previous run is left stale (Streamlit marks them until the run replaces or removes them),
# the contexts and the verdict and skip buttons are there. Claims are told apart by their
# trace and index (data-claim), not their text: the generated traces repeat sentences, and
# two claims of the same text in a row once left a press waiting for 60 s.
DRAWN = """before => {
    const claim = document.querySelector('.annotate-claim');
    if (!claim || claim.dataset.claim === before) return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    return document.querySelectorAll('.annotate-context').length > 0
        && document.querySelector('[class*="st-key-label_skip_"]') !== null
        && document.querySelectorAll('[class*="st-key-label_button_"]').length > 0;
}"""


def rss(pid: int) -> int:
    """Resident memory of a process in bytes (Linux)."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far (Linux)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_cookies(db: Path, reviewers: list[str]) -> dict[str, str]:
    """A signed-in session per reviewer, as the cookie a browser sends after signing in
    (made before the app starts: the running app holds the store)."""
    from annotate.accounts.users import start_session

    store = open_store(db)
    try:
        return {name: f"{COOKIE}={start_session(store, name)}" for name in reviewers}
    finally:
        store.close()
