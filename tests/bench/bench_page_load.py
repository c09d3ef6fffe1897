"""Page changes for a lead on a large store, in chromium: Home, Agreement, Calibration and
Rates, from the click on the page's link in the sidebar until the page is fully drawn (the run
finished, no stale element left, every chart and table rendered, the page's last element
there), first visit and revisit; beside a bare page change (a two-page bare Streamlit app,
the same sidebar links) measured in the same run, interleaved: a bare change before each of
ours. Also the app's CPU time per change, its peak RSS, and `annotate report`.

The store is built by a real import of generated traces (judge verdicts on most), a sample of
2,500 traces with claims split by sentence, and three reviewers' labels on every claim of it
(about 10,000 labelled claims). Each round starts a fresh app process (the first visit of a
page is its first in that process: nothing cached) and visits the four pages in turn, then
visits them again in the same browser session (the revisit). Each round also opens each
statistics page as the first of a fresh app process (by link), Rates once more with its frame
not kept in the store.

Sized by ANNOTATE_BENCH_LARGE (default 300,000 traces) and ANNOTATE_BENCH_PAGE_ROUNDS (default
2). Building the store takes minutes: with ANNOTATE_BENCH_KEEP_STORE=1 it is kept in the
temporary directory ($TMPDIR) and used again by later runs of the same size and schema
(ANNOTATE_BENCH_REBUILD=1 builds it afresh). Without it every run builds its own store, as
the smoke test needs.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from annotate.accounts.users import add_user
from annotate.claims.extraction import create_claims
from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from annotate.store.schema import MIGRATIONS
from tests.bench.bench_label_load import Wire, listen, until
from tests.bench.figures import OWN_PEAK, bench_size, child_result, megabytes, show
from tests.bench.label_pages import (
    CHROMIUM_ARGS,
    ROOT,
    cpu_seconds,
    session_cookies,
    start_streamlit,
    stop,
)
from tests.bench.synthetic import write_jsonl

SAMPLE = 2500
REVIEWERS = (("rev-a", 3), ("rev-b", 6), ("rev-c", 10))  # name, error in percent
# sidebar link -> the page's title and the last element it draws for a lead (Calibration and
# Rates: their open tab, ui.lazy_tabs; a closed tab is neither computed nor drawn)
PAGES = {
    "Home": ("annotate", ".st-key-home_trace"),
    "Agreement": ("Agreement between reviewers", ".st-key-agreement_min_shared"),
    "Calibration": ("Calibration of the judge", ".st-key-calibration_tab_0"),
    "Rates": ("Hallucination rates", ".st-key-rates_tab_0"),
}
START = "users"  # a page without statistics: where each round's browser session opens
BARE_PAGES = {"One": ("one", ".st-key-bare_one"), "Two": ("two", ".st-key-bare_two")}
BARE = """
import streamlit as st


def one():
    st.title("one")
    with st.container(key="bare_one"):
        st.dataframe([{"n": i, "square": i * i} for i in range(10)])


def two():
    st.title("two")
    with st.container(key="bare_two"):
        st.dataframe([{"n": i, "cube": i**3} for i in range(10)])


pages = [st.Page(one, title="One", default=True), st.Page(two, title="Two")]
current = st.navigation(pages, position="hidden")
with st.sidebar:
    for page in pages:
        st.page_link(page)
current.run()
"""
# Fully drawn: the page's title and last element are there, nothing is left stale from the
# page before, and every chart and table has drawn (vega-embed's canvas or svg; the grid's
# canvas, for a table not inside a closed expander).
DRAWN = """([title, last]) => {
    if (document.querySelector('[data-stale="true"]')) return false;
    const titles = [...document.querySelectorAll('h1')].map(h => h.textContent.trim());
    if (!titles.includes(title) || !document.querySelector(last)) return false;
    for (const chart of document.querySelectorAll('[data-testid="stVegaLiteChart"]'))
        if (!chart.querySelector('canvas, svg')) return false;
    for (const table of document.querySelectorAll('[data-testid="stDataFrame"]'))
        if (table.checkVisibility() && !table.querySelector('canvas')) return false;
    return true;
}"""
TIMEOUT = 120.0


class Client:
    """One browser page on one server: a click on a sidebar link, timed until drawn."""

    def __init__(self, page, wire: Wire, pages: dict[str, tuple[str, str]], pid: int) -> None:
        self.page, self.wire, self.pages, self.pid = page, wire, pages, pid

    async def change(self, name: str) -> tuple[float, float, float]:
        """Seconds from the click on `name`'s link until the page is drawn, and until the
        server's run finished (the rest is the browser drawing); the server's CPU seconds."""
        await until(lambda: not self.wire.running, TIMEOUT)
        finished, cpu = self.wire.finished, cpu_seconds(self.pid)
        link = self.page.locator(
            "[data-testid='stPageLink-NavLink']", has_text=re.compile(f"^{name}$")
        )
        started = time.perf_counter()
        await link.click()
        if not await until(lambda: self.wire.finished > finished, TIMEOUT):
            raise RuntimeError(f"no run finished after a click on {name}")
        answered = time.perf_counter() - started
        await until(lambda: not self.wire.running, TIMEOUT)
        await self.page.wait_for_function(
            DRAWN, arg=list(self.pages[name]), polling=20, timeout=TIMEOUT * 1000
        )
        return time.perf_counter() - started, answered, cpu_seconds(self.pid) - cpu


async def open_client(browser, url: str, pid: int, pages, cookie: str = "") -> Client:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    if cookie:
        name, value = cookie.split("=", 1)
        await context.add_cookies([{"name": name, "value": value, "url": url}])
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT * 1000)
    wire = Wire()
    listen(page, wire)
    await page.goto(f"{url}/{START}" if cookie else url)
    await page.locator("[data-testid='stPageLink-NavLink']").first.wait_for()
    await until(lambda: wire.finished > 0 and not wire.running, TIMEOUT)
    return Client(page, wire, pages, pid)


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


# Each round runs the app in these modes, interleaved: the lead pages' default views computed
# ahead (widgets/ahead.py, the app as shipped) with the lead clicking on as soon as Home is
# drawn, and after reading Home for ANNOTATE_BENCH_HOME_PAUSE seconds (default 5); and the
# same-run baseline without the worker (every first visit computes its own statistics).
MODES = (("ahead, at once", True, False), ("ahead, Home read first", True, True),
         ("no worker", False, False))  # fmt: skip


async def one_round(
    browser, db: Path, bare: Path, cookie: str, ahead: bool = True, pause: float = 0.0
) -> dict[str, list]:
    """A fresh app process and a fresh bare one: each lead page visited twice, a bare page
    change before each visit (and `pause` seconds on Home's first visit). Returns (seconds,
    app CPU seconds) per visit and the bare's."""
    app, url = start_streamlit(
        ROOT / "app.py", db, env={"ANNOTATE_COMPUTE_AHEAD": "1" if ahead else "0"}
    )
    base, base_url = start_streamlit(bare, None)
    found: dict[str, list] = {"bare": [], "load": [load_average()]}
    try:
        ours = await open_client(browser, url, app.pid, PAGES, cookie)
        theirs = await open_client(browser, base_url, base.pid, BARE_PAGES)
        for visit in ("first", "again"):
            for name in PAGES:
                found["bare"].append(
                    await theirs.change("One" if len(found["bare"]) % 2 else "Two")
                )
                found[f"{name} {visit}"] = [await ours.change(name)]
                if name == "Home" and visit == "first" and pause:
                    await asyncio.sleep(pause)  # the lead reads the store at a glance
        found["peak_rss"] = [peak_rss(app.pid)]
        found["load"].append(load_average())
    finally:
        stop(app)
        stop(base)
    return found


# A lead whose first statistics page is the one they came for (a bookmark): a fresh app process
# as shipped (the worker on), the lead on Users for LINK_PAUSE seconds (what the imports
# started after it have), then one click on that page; a bare page change before it. The
# Rates frame an earlier process kept in the store is read (annotate.store.kept_frames), as
# after a restart; Rates once more with none kept, as after an import or a judge run.
LINK_PAUSE = 1.0
FRAME_COMPUTED = "Rates, its frame not kept"


async def link_round(browser, db: Path, bare: Path, cookie: str) -> dict[str, list]:
    found: dict[str, list] = {"bare": [], "load": [load_average()], "mode": ["by link"]}
    base, base_url = start_streamlit(bare, None)
    try:
        theirs = await open_client(browser, base_url, base.pid, BARE_PAGES)
        for name in [*[page for page in PAGES if page != "Home"], FRAME_COMPUTED]:
            if name == FRAME_COMPUTED:
                forget_kept_frames(db)
            app, url = start_streamlit(ROOT / "app.py", db, env={"ANNOTATE_COMPUTE_AHEAD": "1"})
            try:
                ours = await open_client(browser, url, app.pid, PAGES, cookie)
                await asyncio.sleep(LINK_PAUSE)
                found["bare"].append(
                    await theirs.change("One" if len(found["bare"]) % 2 else "Two")
                )
                found[name] = [await ours.change(name.split(",")[0])]
                await ours.page.context.close()
            finally:
                stop(app)
        found["load"].append(load_average())
    finally:
        stop(base)
    return found


def forget_kept_frames(db: Path) -> None:
    store = open_store(db)
    try:
        store.execute("DELETE FROM kept_frames")
    finally:
        store.close()


async def visit_rounds(db: Path, bare: Path, rounds: int) -> list[dict[str, list]]:
    from playwright.async_api import async_playwright

    cookie = session_cookies(db, ["lead"])["lead"]
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        try:
            pause = float(os.environ.get("ANNOTATE_BENCH_HOME_PAUSE", "5"))
            found = []
            for _ in range(rounds):
                for mode, ahead, reads in MODES:
                    result = await one_round(
                        browser, db, bare, cookie, ahead, pause if reads else 0
                    )
                    found.append({**result, "mode": [mode]})
                found.append(await link_round(browser, db, bare, cookie))
            return found
        finally:
            await browser.close()


# `annotate report` without --sample, the whole command in a fresh interpreter (its chart
# helper is a process of its own); baseline: an interpreter that opens the same store with
# DuckDB and counts the labelled claims, the least any command does.
REPORT = (
    OWN_PEAK
    + """
import json, sys
from annotate.cli.main import main
code = main(["report", "--judge", sys.argv[2], "--out", sys.argv[3], "--db", sys.argv[1]])
print(json.dumps({"code": code, "peak_rss": own_peak()}))
"""
)
OPEN_ONLY = (
    OWN_PEAK
    + """
import json, sys
import duckdb
conn = duckdb.connect(sys.argv[1])
conn.execute("SELECT count(DISTINCT (trace_id, claim_index)) FROM label_events").fetchall()
print(json.dumps({"code": 0, "peak_rss": own_peak()}))
"""
)


def timed_child(code: str, *args: str) -> tuple[float, int]:
    """Seconds from start to exit of a fresh interpreter running `code`, and its peak RSS."""
    started = time.perf_counter()
    found = child_result(code, *args, what="command")
    if found["code"] != 0:
        raise RuntimeError(f"the command exited with {found['code']}")
    return time.perf_counter() - started, found["peak_rss"]


def report_command(db: Path, out: Path, runs: int) -> None:
    judge = "groundedness-v3"
    for run in range(1, runs + 1):
        base, base_peak = timed_child(OPEN_ONLY, str(db))
        took, peak = timed_child(REPORT, str(db), judge, str(out))
        show(
            f"annotate report without --sample, run {run}: {took:.2f} s for the whole command "
            f"(target < 2 s), peak RSS {megabytes(peak)} (target < 600 MB); baseline, an "
            f"interpreter opening the store and counting its labelled claims: {base:.2f} s, "
            f"{megabytes(base_peak)} (ratio {took / base:.1f}x)"
        )


def fill_store(db: Path, count: int) -> None:
    store = open_store(db)
    source = db.with_suffix(".jsonl")
    write_jsonl(source, count)
    report = import_traces(store, source, fmt="jsonl", actor="bench")
    source.unlink()
    if not report.is_clean:
        raise RuntimeError(f"the generated file did not import cleanly: {report.counts()}")
    draw_sample(store, SampleSpec(name="bench", n=SAMPLE, by=("feature",), seed=1))
    create_claims(store, "bench", extractor="sentences", actor="bench")
    for name, error in REVIEWERS:
        add_user(store, name, "reviewer", "bench passphrase")
        store.execute(
            "INSERT INTO label_events (trace_id, claim_index, reviewer, label, rubric_version, "
            "created_at, origin) SELECT c.trace_id, c.claim_index, ?, "
            "CASE WHEN (hash(c.trace_id || ? || c.claim_index::VARCHAR) % 100 < ?) "
            "  <> (hash(c.trace_id || c.claim_index::VARCHAR) % 100 < 25) "
            "THEN 'contradicted' ELSE 'supported' END, 1, "
            "TIMESTAMP '2026-02-01' + to_seconds(row_number() OVER () * 30), 'app' "
            "FROM claims c JOIN sample_units s ON s.trace_id = c.trace_id AND s.sample = 'bench'",
            [name, name, error],
        )
    add_user(store, "lead", "lead", "bench passphrase")
    store.close()


def cached_store(db: Path, count: int) -> None:
    """The store for `count` traces at `db`: built here, or copied from a kept one."""
    if not os.environ.get("ANNOTATE_BENCH_KEEP_STORE"):
        started = time.perf_counter()
        fill_store(db, count)
        show(f"(built in {time.perf_counter() - started:.0f} s)")
        return
    schema = hashlib.sha256(repr(MIGRATIONS).encode()).hexdigest()[:12]
    kept = Path(tempfile.gettempdir()) / f"annotate-bench-pages-{count}-{schema}.duckdb"
    if os.environ.get("ANNOTATE_BENCH_REBUILD") or not kept.exists():
        started = time.perf_counter()
        building = db.with_name("building.duckdb")  # in this run's own directory
        fill_store(building, count)
        shutil.move(building, kept)
        show(f"(built in {time.perf_counter() - started:.0f} s; kept as {kept})")
    else:
        show(f"(store kept from an earlier run: {kept})")
    shutil.copyfile(kept, db)
    store = open_store(db)
    labelled = store.scalar("SELECT count(DISTINCT (trace_id, claim_index)) FROM label_events")
    store.close()
    show(f"store: {count:,} imported traces, {labelled:,} claims labelled by 3 reviewers")


def show_round(number: int, found: dict[str, list], count: int) -> None:
    bare, bare_run, bare_cpu = (list(column) for column in zip(*found["bare"], strict=True))
    median = statistics.median(bare)
    if found["mode"] == ["by link"]:
        show(
            f"round {number}, by link: the first statistics page of a fresh app process (worker "
            f"on), clicked {LINK_PAUSE:.0f} s after Users drew (load average {found['load'][0]} "
            f"-> {found['load'][1]}); baseline, a bare page change: median {median:.3f} s"
        )
        for name in [page for page in [*PAGES, FRAME_COMPUTED] if page in found]:
            seconds, run_finished, cpu = found[name][0]
            show(
                f"  {name}, {count:,} traces, first page: {seconds:.2f} s (target < 1 s; "
                f"{seconds / median:.1f}x bare; run finished at {run_finished:.2f} s, app CPU "
                f"{cpu:.2f} s)"
            )
        return
    show(
        f"round {number}, {found['mode'][0]} (load average {found['load'][0]} at its start, {found['load'][1]} at "
        f"its end): baseline, a bare page change: median {median:.3f} s (of {len(bare)}: "
        f"{min(bare):.3f}-{max(bare):.3f} s; run finished at {statistics.median(bare_run):.3f} s), "
        f"app CPU {statistics.median(bare_cpu):.3f} s"
    )
    for name in PAGES:
        (first, first_run, first_cpu) = found[f"{name} first"][0]
        (again, again_run, again_cpu) = found[f"{name} again"][0]
        show(
            f"  {name}, {count:,} traces: first visit {first:.2f} s (target < 1 s; "
            f"{first / median:.1f}x bare; run finished at {first_run:.2f} s, app CPU "
            f"{first_cpu:.2f} s), revisit {again:.3f} s (target < 0.3 s; {again / median:.1f}x "
            f"bare; run finished at {again_run:.3f} s, app CPU {again_cpu:.3f} s)"
        )
    show(f"  peak RSS of the app process after every page: {megabytes(found['peak_rss'][0])}")


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_LARGE", 300_000)
    rounds = bench_size("ANNOTATE_BENCH_PAGE_ROUNDS", 2)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "pages.duckdb"
        cached_store(db, count)
        bare = Path(tmp) / "bare" / "bare.py"  # its own folder: Streamlit's default settings
        bare.parent.mkdir()
        bare.write_text(BARE)
        found = asyncio.run(visit_rounds(db, bare, rounds))
        for index, result in enumerate(found):
            show_round(index // (len(MODES) + 1) + 1, result, count)
        report_command(db, Path(tmp) / "report", rounds)
