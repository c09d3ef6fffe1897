"""Time from a verdict key press until the next claim's whole area is drawn, in chromium.

The store is built by a real import of generated traces (2-3 contexts each, judge verdicts,
random ids; claims split by sentence where the trace has none). Timing stops when the new
claim's text is on screen AND the rerun has finished drawing (no stale element left: context,
buttons and controls are the new claim's). Baseline, same run: a bare Streamlit app whose
button (shortcut "1") bumps a counter; key press to the new count on screen. Then 5 reviewers
labelling at once, each in their own browser context, twice: at a reading pace (each reads a
claim for 1 to 3 s before the key, seeded; a fast reviewer: real ones take longer), which is
what a team labelling together asks of the app, and as fast as the page draws (no reading at
all: five sessions saturating two cores that also run the six browsers, a stress figure). The
bare app is measured the same two ways. The app's RSS is printed after the
first reviewer's presses and at the end (memory flat over a long session).

Sized by ANNOTATE_BENCH_SMALL (default 100,000 traces in the store) and
ANNOTATE_BENCH_PRESSES (default 40 presses per reviewer).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from annotate.accounts.users import add_user
from annotate.claims.extraction import create_claims
from annotate.ingest.importer import import_traces
from annotate.labelling.assignment import assign
from annotate.labelling.session import set_min_dwell
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from tests.bench.figures import bench_size, megabytes, show
from tests.bench.synthetic import write_jsonl

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "bench passphrase"
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


def start_streamlit(script: Path, db: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    """The app runs from the repository (its .streamlit/config.toml); the bare app from its
    own folder, so the baseline is Streamlit with its default settings."""
    port = free_port()
    env = {**os.environ, **({"ANNOTATE_DB": str(db)} if db else {})}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
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


READING = (1.0, 3.0)  # seconds a (fast) reviewer reads a claim before the key, paced runs


async def read_claim(rng: random.Random | None) -> None:
    if rng is not None:
        await asyncio.sleep(rng.uniform(*READING))


async def bare_latencies(
    browser, url: str, presses: int, rng: random.Random | None = None
) -> list[float]:
    page = await (await browser.new_context()).new_page()
    await page.goto(url)
    await page.locator(".bare-count").wait_for()
    times = []
    for n in range(presses):
        await read_claim(rng)
        started = time.perf_counter()
        await page.keyboard.press("1")
        await page.get_by_text(f"count {n + 1}", exact=True).wait_for()
        times.append(time.perf_counter() - started)
    return times


async def label_latencies(
    browser,
    url: str,
    reviewer: str,
    presses: int,
    watch: tuple[int, list[int]] | None = None,
    rng: random.Random | None = None,
) -> list[float]:
    """Key press -> whole claim area, per press; `watch` (pid, list) collects the app's RSS
    every 10 presses; `rng` paces the presses at a reading speed (READING)."""
    page = await open_label(browser, url, reviewer)
    times = []
    for _ in range(presses):
        before = await page.locator(".annotate-claim").get_attribute("data-claim")
        await page.evaluate("document.activeElement && document.activeElement.blur()")
        await read_claim(rng)
        started = time.perf_counter()
        await page.keyboard.press("1")
        await page.wait_for_function(DRAWN, arg=before, polling="raf")
        times.append(time.perf_counter() - started)
        if watch and len(times) % 10 == 0:
            watch[1].append(rss(watch[0]))
    return times


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


async def measure(app_url: str, bare_url: str, presses: int, app_pid: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        bare = await bare_latencies(browser, bare_url, presses)
        bare_together = await asyncio.gather(
            *(bare_latencies(browser, bare_url, presses) for _ in REVIEWERS)
        )
        bare_paced = await asyncio.gather(
            *(
                bare_latencies(browser, bare_url, presses, random.Random(i))
                for i, _ in enumerate(REVIEWERS)
            )
        )
        session_rss: list[int] = []
        alone = await label_latencies(
            browser, app_url, REVIEWERS[0], presses, (app_pid, session_rss)
        )
        rss_alone = rss(app_pid)
        paced = await asyncio.gather(
            *(
                label_latencies(browser, app_url, r, presses, rng=random.Random(i))
                for i, r in enumerate(REVIEWERS[1:] + REVIEWERS[:1])
            )
        )
        together = await asyncio.gather(
            *(label_latencies(browser, app_url, r, presses) for r in REVIEWERS[1:] + REVIEWERS[:1])
        )
        rss_together = rss(app_pid)
        await browser.close()
    return {
        "bare": bare,
        "bare_together": [t for times in bare_together for t in times],
        "bare_paced": [t for times in bare_paced for t in times],
        "paced": [t for times in paced for t in times],
        "alone": alone,
        "together": [t for times in together for t in times],
        "rss": (rss_alone, rss_together),
        "session_rss": session_rss,
    }


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_SMALL", 100_000)
    presses = bench_size("ANNOTATE_BENCH_PRESSES", 40)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "label.duckdb"
        started = time.perf_counter()
        fill_store(db, count, sample=(presses * 2) // 3 + 10)
        show(f"store of {count:,} imported traces built in {time.perf_counter() - started:.0f} s")
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text(BARE_APP)
        app, app_url = start_streamlit(ROOT / "app.py", db)
        bare, bare_url = start_streamlit(bare_script, None)
        try:
            got = asyncio.run(measure(app_url, bare_url, presses, app.pid))
        finally:
            stop(app)
            stop(bare)
    b_med, b_p95 = summary(got["bare"])
    a_med, a_p95 = summary(got["alone"])
    t_med, t_p95 = summary(got["together"])
    p_med, p_p95 = summary(got["paced"])
    bp_med, bp_p95 = summary(got["bare_paced"])
    show(
        f"baseline, bare streamlit key -> text: median {b_med * 1000:.0f} ms, "
        f"p95 {b_p95 * 1000:.0f} ms ({presses} presses)"
    )
    show(
        f"verdict key -> whole claim area drawn, {count:,} traces, 1 reviewer: "
        f"median {a_med * 1000:.0f} ms, p95 {a_p95 * 1000:.0f} ms; "
        f"median {a_med / b_med:.2f}x bare median (target <= 1.2x), "
        f"p95 {a_p95 / b_med:.2f}x bare median (target <= 2x)"
    )
    show(
        f"same, {len(REVIEWERS)} reviewers at once, each reading a claim {READING[0]:.0f}-"
        f"{READING[1]:.0f} s: median {p_med * 1000:.0f} ms, p95 {p_p95 * 1000:.0f} ms; "
        f"median {p_med / b_med:.2f}x bare median (target <= 1.5x), p95 {p_p95 / b_med:.2f}x; "
        f"{len(REVIEWERS)} bare sessions at the same pace: median {bp_med * 1000:.0f} ms, "
        f"p95 {bp_p95 * 1000:.0f} ms ({bp_med / b_med:.2f}x)"
    )
    show(
        f"stress, {len(REVIEWERS)} reviewers pressing as fast as the page draws: "
        f"median {t_med * 1000:.0f} ms, p95 {t_p95 * 1000:.0f} ms; "
        f"median {t_med / b_med:.2f}x bare median, p95 {t_p95 / b_med:.2f}x bare median"
    )
    c_med, c_p95 = summary(got["bare_together"])
    show(
        f"(for scale: {len(REVIEWERS)} bare sessions at once: median {c_med * 1000:.0f} ms, "
        f"p95 {c_p95 * 1000:.0f} ms, {c_med / b_med:.2f}x the bare median: the machine's share)"
    )
    show(
        "app RSS every 10 verdicts of the one reviewer's session: "
        + ", ".join(megabytes(size) for size in got["session_rss"])
    )
    alone_rss, end_rss = got["rss"]
    show(
        f"app RSS after {presses} verdicts: {megabytes(alone_rss)}; after "
        f"{presses * (len(REVIEWERS) + 1)} verdicts in 6 sessions: {megabytes(end_rss)}"
    )
