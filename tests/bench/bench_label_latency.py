"""Time from a verdict key press to the next claim on screen, in chromium, 100,000 traces in the store.

Baseline, same run: a bare Streamlit app whose button (shortcut "1") bumps a counter;
the time from key press to the new count on screen. Then the same measurement with
5 reviewers labelling at once, each in their own browser context. Sized by
ANNOTATE_BENCH_SMALL (default 100,000 traces); ANNOTATE_BENCH_PRESSES (default 40).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from annotate.accounts.users import add_user
from annotate.labelling.assignment import assign
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from tests.bench.figures import bench_size, show

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


def fill_store(db: Path, count: int, sample: int) -> None:
    store = open_store(db)
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at) VALUES (1, 'traces', 'bench', 'sql', now())"
    )
    store.execute(
        "INSERT INTO traces SELECT 'tr-' || lpad(i::VARCHAR, 7, '0'), 1, i, '', TIMESTAMP '2026-01-01', "
        "'feature_' || (i % 4)::VARCHAR, 'risk_' || (i % 3)::VARCHAR, 'm-1', 'Where is my order?', "
        "'Order ' || i::VARCHAR || ' shipped on 2026-03-01. Delivery takes 3 days. It costs $' || (i % 90)::VARCHAR || '.', "
        "TRUE, '{}' FROM range(?) t(i)",
        [count],
    )
    store.execute(
        "INSERT INTO contexts SELECT trace_id, 0, 'kb/orders', 'Order ' || source_line::VARCHAR || "
        "' shipped on 2026-03-01 from Berlin. Standard delivery takes 3 to 5 days. ' || repeat('Policy text. ', 40) FROM traces"
    )
    store.execute(
        "INSERT INTO claims SELECT trace_id, k, 'Claim ' || k::VARCHAR || ' of ' || trace_id, NULL, NULL, 'provided' "
        "FROM traces, range(3) r(k)"
    )
    draw_sample(store, SampleSpec(name="bench", n=sample, by=("feature",), seed=1))
    for name in REVIEWERS:
        add_user(store, name, "reviewer", PASSWORD)
    assign(store, "bench", REVIEWERS, per_trace=len(REVIEWERS), seed=1)
    store.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_streamlit(script: Path, db: Path | None) -> tuple[subprocess.Popen[bytes], str]:
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
        cwd=ROOT,
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


async def bare_latencies(browser, url: str, presses: int) -> list[float]:
    page = await (await browser.new_context()).new_page()
    await page.goto(url)
    await page.locator(".bare-count").wait_for()
    times = []
    for n in range(presses):
        started = time.perf_counter()
        await page.keyboard.press("1")
        await page.get_by_text(f"count {n + 1}", exact=True).wait_for()
        times.append(time.perf_counter() - started)
    return times


async def label_latencies(browser, url: str, reviewer: str, presses: int) -> list[float]:
    page = await (await browser.new_context(viewport={"width": 1400, "height": 1000})).new_page()
    page.set_default_timeout(60_000)
    await page.goto(url)
    await page.get_by_label("User name").fill(reviewer)
    await page.get_by_label("Password", exact=True).fill(PASSWORD)
    await page.get_by_label("Password", exact=True).press("Enter")
    await page.get_by_text(f"Signed in as {reviewer}").wait_for()
    await page.locator("[data-testid='stSidebarNavLink']", has_text="Label").click()
    try:
        await page.locator(".annotate-claim").wait_for()
    except Exception:
        await page.screenshot(path=f"/tmp/label-latency-{reviewer}.png", full_page=True)
        raise
    times = []
    for _ in range(presses):
        before = await page.locator(".annotate-claim").inner_text()
        await page.evaluate("document.activeElement && document.activeElement.blur()")
        started = time.perf_counter()
        await page.keyboard.press("1")
        await page.wait_for_function(
            "t => document.querySelector('.annotate-claim')?.innerText !== t", arg=before
        )
        times.append(time.perf_counter() - started)
    return times


async def measure(
    app_url: str, bare_url: str, presses: int
) -> tuple[list[float], list[float], list[float]]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        bare = await bare_latencies(browser, bare_url, presses)
        alone = await label_latencies(browser, app_url, REVIEWERS[0], presses)
        together = await asyncio.gather(
            *(label_latencies(browser, app_url, r, presses) for r in REVIEWERS[1:] + REVIEWERS[:1])
        )
        await browser.close()
    return bare, alone, [t for times in together for t in times]


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_SMALL", 100_000)
    presses = bench_size("ANNOTATE_BENCH_PRESSES", 40)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "label.duckdb"
        fill_store(db, count, sample=(presses * 2) // 3 + 10)
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text(BARE_APP)
        app, app_url = start_streamlit(ROOT / "app.py", db)
        bare, bare_url = start_streamlit(bare_script, None)
        try:
            bare_times, alone, together = asyncio.run(measure(app_url, bare_url, presses))
        finally:
            stop(app)
            stop(bare)
    b_med, b_p95 = summary(bare_times)
    a_med, a_p95 = summary(alone)
    t_med, t_p95 = summary(together)
    show(
        f"bare streamlit button round trip: median {b_med * 1000:.0f} ms, p95 {b_p95 * 1000:.0f} ms ({presses} presses)"
    )
    show(
        f"verdict key press -> next claim, {count:,} traces, 1 reviewer: median {a_med * 1000:.0f} ms, "
        f"p95 {a_p95 * 1000:.0f} ms; ratio to bare {a_med / b_med:.1f}x (median), {a_p95 / b_p95:.1f}x (p95)"
    )
    show(
        f"same with {len(REVIEWERS)} reviewers at once: median {t_med * 1000:.0f} ms, p95 {t_p95 * 1000:.0f} ms; "
        f"ratio to bare {t_med / b_med:.1f}x (median), {t_p95 / b_p95:.1f}x (p95)"
    )
