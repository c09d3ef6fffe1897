"""Speed of a key press on the Label page (issue 38), every figure beside a bare Streamlit
baseline measured in the same run.

The store is built by a real import of generated traces (2-3 contexts each, judge verdicts,
random ids; claims split by sentence). The client is chromium (Playwright), one browser
context per reviewer, so each press goes through the page's websocket as a person's does.
A press is timed from the key until the next claim's whole area is drawn: its text on screen
AND the rerun finished (no stale element left; context, buttons and controls are the new
claim's). The bare app is a counter whose button (shortcut "1") bumps a number; key -> the
new number on screen. Both are polled at every animation frame.

1. CPU per press: the app's process CPU time over N presses of one reviewer, against the bare
   app's over N presses, the two pressed in turn, press by press (the machine is shared).
2. Key -> next claim drawn in chromium, one reviewer pressing as soon as the claim is drawn,
   against the bare app in chromium: the same presses as 1. A second baseline in the same
   turns: the bare app drawing what the claim area must show (tests/bench/label_pages.py
   CONTENT_APP: the same claims' boxes and context panes, as the Label page's HTML, in the
   same layout, with none of its controls), key -> the next claim drawn; what it adds to the
   bare counter is the content's own cost, what the Label page adds to it is the page's.
3. Five reviewers at once, each pressing as soon as their claim is drawn, against five bare
   sessions doing the same: in chromium (two rounds of each, interleaved), and with the wire client (tests/bench/label_wire.py:
   Streamlit's websocket protocol without a browser; answered = run finished and the next
   claim's element arrived).
4. 1, 5, 10 and 20 reviewers at a realistic pace (one press every 3-8 s each, seeded), each
   level against as many bare sessions at the same pace, with the wire client: twenty
   chromiums on the two cores that also run the app would measure the browsers, and each
   reviewer's browser runs on their own machine.
5. Where chromium's time goes: ANNOTATE_BENCH_TRACED presses (default 10) of each under
   chromium's performance trace, the page's main thread per press split into scripting, style
   and layout, paint and other, and the websocket messages a press brings
   (tests/bench/label_trace.py).
The app's RSS is printed after the first reviewer's presses and at the end.

Sized by ANNOTATE_BENCH_SMALL (traces, default 100,000), ANNOTATE_BENCH_PRESSES (back-to-back
presses, default 40), ANNOTATE_BENCH_PACED (presses per reviewer at a pace, default 12),
ANNOTATE_BENCH_LEVELS (default "1,5,10,20") and ANNOTATE_BENCH_PACE (seconds, default "3,8").
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.figures import bench_size, megabytes, show
from tests.bench.label_pages import (
    BARE_APP,
    CHROMIUM_ARGS,
    CONTENT_APP,
    DRAWN,
    ROOT,
    content_pages,
    cpu_seconds,
    fill_store,
    open_label,
    rss,
    session_cookies,
    start_streamlit,
    stop,
)
from tests.bench.label_trace import Frames, describe, traced
from tests.bench.label_wire import WireSession

AT_ONCE = 5  # reviewers pressing together as fast as the page draws
TRACED = bench_size("ANNOTATE_BENCH_TRACED", 10)  # presses of each under chromium's trace


def numbers(variable: str, default: str) -> list[float]:
    raw = os.environ.get(variable, "").strip() or default
    try:
        return [float(part) for part in raw.split(",")]
    except ValueError:
        raise SystemExit(f"{variable}={raw!r} must be numbers separated by commas") from None


async def bare_page(browser, url: str, hook=None, ready: str = ".bare-count", **context):
    """A page on a bare app (`context`: the browser context's options, as a viewport), once
    `ready` is drawn."""
    page = await (await browser.new_context(**context)).new_page()
    page.set_default_timeout(120_000)
    if hook is not None:
        hook(page)
    await page.goto(url)
    await page.locator(ready).wait_for()
    return page


# Polled at every frame, as the Label page's DRAWN is: a locator's wait polls at 20, 50, 100
# and then 500 ms steps, which rounded the bare figure up.
BARE_DRAWN = "n => document.querySelector('.bare-count')?.innerText === `count ${n}`"


async def bare_press(page) -> float:
    count = int((await page.locator(".bare-count").inner_text()).split()[-1])
    started = time.perf_counter()
    await page.keyboard.press("1")
    await page.wait_for_function(BARE_DRAWN, arg=count + 1, polling="raf")
    return time.perf_counter() - started


# The content app's next claim: another claim box with its context pane, nothing stale.
CONTENT_DRAWN = """before => {
    const claim = document.querySelector('.annotate-claim');
    if (!claim || claim.dataset.claim === before) return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    return document.querySelectorAll('.annotate-context').length > 0;
}"""


async def claim_press(page, drawn: str) -> float:
    """Key "1" until the next claim is drawn (`drawn`: DRAWN or CONTENT_DRAWN)."""
    before = await page.locator(".annotate-claim").get_attribute("data-claim")
    await page.evaluate("document.activeElement && document.activeElement.blur()")
    started = time.perf_counter()
    await page.keyboard.press("1")
    await page.wait_for_function(drawn, arg=before, polling="raf")
    return time.perf_counter() - started


async def content_press(page) -> float:
    return await claim_press(page, CONTENT_DRAWN)


async def label_press(page) -> float:
    return await claim_press(page, DRAWN)


async def presses(press, page, count: int, pace: tuple[float, float] | None, seed: int):
    """`count` presses on one page, each after a wait drawn from `pace` (None: at once)."""
    rng, times = random.Random(seed), []
    for _ in range(count):
        if pace is not None:
            await asyncio.sleep(rng.uniform(*pace))
        times.append(await press(page))
    return times


async def together(press, pages, count: int, pace=None) -> list[float]:
    runs = await asyncio.gather(
        *(presses(press, page, count, pace, seed) for seed, page in enumerate(pages))
    )
    return [t for run in runs for t in run]


async def alternating(app, bare, content, pids, count: int) -> dict[str, list[Any]]:
    """`count` presses on each page, the bare app, the content app and the Label page in turn,
    press by press (the load of the shared machine swings within seconds: blocks of presses
    met different loads), and each server's CPU seconds over the whole sequence (a server is
    idle while the others work, and the Label page's reading ahead after a press still counts
    as its own)."""
    times: dict[str, list[float]] = {"app": [], "bare": [], "content": []}
    before = [cpu_seconds(pid) for pid in pids]
    for _ in range(count):
        times["bare"].append(await bare_press(bare))
        times["content"].append(await content_press(content))
        times["app"].append(await label_press(app))
    spent = [cpu_seconds(pid) - start for pid, start in zip(pids, before, strict=True)]
    return {
        "app": [times["app"], spent[0]],
        "bare": [times["bare"], spent[1]],
        "content": [times["content"], spent[2]],
    }


class Sessions:
    """Chromium pages on the app (one signed-in reviewer each) and on the bare app, opened
    when a figure first needs them and kept for the next."""

    def __init__(self, browser, app_url: str, bare_url: str, reviewers: list[str]) -> None:
        self.browser, self.app_url, self.bare_url = browser, app_url, bare_url
        self.reviewers, self.app, self.bare = reviewers, [], []

    async def apps(self, count: int) -> list[Any]:
        while len(self.app) < count:
            name = self.reviewers[len(self.app)]
            self.app.append(await open_label(self.browser, self.app_url, name))
        return self.app[:count]

    async def bares(self, count: int) -> list[Any]:
        while len(self.bare) < count:
            self.bare.append(await bare_page(self.browser, self.bare_url))
        return self.bare[:count]


async def in_chromium(urls, pids, reviewers, back_to_back: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    got: dict[str, Any] = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        sessions = Sessions(browser, urls[0], urls[1], reviewers)
        frames = {"app": Frames(), "bare": Frames(), "content": Frames()}
        app = await open_label(browser, urls[0], reviewers[0], hook=frames["app"].hook)
        bare = await bare_page(browser, urls[1], hook=frames["bare"].hook)
        content = await bare_page(  # the Label page's window (label_pages.open_label)
            browser,
            urls[2],
            hook=frames["content"].hook,
            ready=".annotate-claim",
            viewport={"width": 1400, "height": 1000},
        )
        sessions.app, sessions.bare = [app], [bare]
        got["cpu"] = await alternating(app, bare, content, pids, back_to_back)
        got["rss_one"] = rss(pids[0])
        got["traced"] = {  # the same presses again, under chromium's performance trace
            "bare": await traced(browser, bare, bare_press, frames["bare"], TRACED),
            "content": await traced(browser, content, content_press, frames["content"], TRACED),
            "app": await traced(browser, app, label_press, frames["app"], TRACED),
        }
        got["bare_at_once"], got["app_at_once"] = [], []
        quarter = max(back_to_back // 4, 1)
        for _ in range(2):  # interleaved halves: a swing of the machine's load falls on both
            got["bare_at_once"] += await together(
                bare_press, await sessions.bares(AT_ONCE), quarter
            )
            got["app_at_once"] += await together(label_press, await sessions.apps(AT_ONCE), quarter)
        await browser.close()
    return got


async def wire_presses(session: WireSession, button: str, count: int, pace, seed: int):
    rng, times = random.Random(seed), []
    await session.open()
    for _ in range(count):
        if pace is not None:
            await asyncio.sleep(rng.uniform(*pace))
        times.append(await session.press(button))
    await session.close()
    return times


async def on_wire(sessions: list[WireSession], button: str, count: int, pace=None):
    runs = await asyncio.gather(
        *(wire_presses(s, button, count, pace, seed) for seed, s in enumerate(sessions))
    )
    return [t for run in runs for t in run]


async def with_wire(urls, cookies: list[str], sizes) -> dict[str, Any]:
    """The wire client's figures: five at once, then each level at a pace; app and bare
    sessions alternate level by level."""
    back_to_back, paced, levels, pace = sizes
    app_url, bare_url = urls

    def apps(count: int) -> list[WireSession]:
        return [WireSession(app_url, cookie, "label") for cookie in cookies[:count]]

    def bares(count: int) -> list[WireSession]:
        return [WireSession(bare_url) for _ in range(count)]

    half = max(back_to_back // 2, 1)
    got: dict[str, Any] = {"paced": {}}
    got["bare_at_once"] = await on_wire(bares(AT_ONCE), "Next", half)
    got["app_at_once"] = await on_wire(apps(AT_ONCE), APP_BUTTON, half)
    for level in levels:
        got["paced"][level] = (
            await on_wire(bares(level), "Next", paced, pace),
            await on_wire(apps(level), APP_BUTTON, paced, pace),
        )
    return got


APP_BUTTON = "label_button_supported_"  # key 1


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def ms(times: list[float]) -> str:
    median, p95 = summary(times)
    return f"median {median * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms"


def ratio(times: list[float], base: list[float]) -> str:
    return f"{summary(times)[0] / summary(base)[0]:.2f}x"


def report(got: dict[str, Any], wire: dict[str, Any], count: int, pace) -> None:
    (app_times, app_cpu), (bare_times, bare_cpu) = got["cpu"]["app"], got["cpu"]["bare"]
    content_times, content_cpu = got["cpu"]["content"]
    n = len(app_times)
    show(
        f"app CPU per verdict key press: {app_cpu / n * 1000:.1f} ms; baseline, bare Streamlit "
        f"round trip: {bare_cpu / n * 1000:.1f} ms; {app_cpu / max(bare_cpu, 1e-9):.1f}x "
        f"(target <= 3x; process CPU time over {n} presses each, chromium)"
    )
    show(
        f"key -> next claim drawn, 1 reviewer, {count:,} traces, chromium: {ms(app_times)}; "
        f"baseline, bare key -> count: {ms(bare_times)}; {ratio(app_times, bare_times)} "
        "(target <= 1.2x)"
    )
    show(
        f"  the bare app drawing the same claims and contexts (no controls), key -> next claim "
        f"drawn, the same turns: {ms(content_times)}, {ratio(content_times, bare_times)} the bare "
        f"counter; the Label page {ratio(app_times, content_times)} of it; server CPU per press "
        f"{content_cpu / n * 1000:.1f} ms"
    )
    traced_app, traced_bare = got["traced"]["app"], got["traced"]["bare"]
    show(
        f"chromium per press, {TRACED} presses traced: Label page {describe(traced_app)}; "
        f"bare app {describe(traced_bare)}; key -> drawn under the trace "
        f"{ms(traced_app['times'])} against {ms(traced_bare['times'])}"
    )
    traced_content = got["traced"]["content"]
    show(
        f"  the bare app drawing the same claims and contexts: {describe(traced_content)}; "
        f"key -> drawn under the trace {ms(traced_content['times'])}"
    )
    for client, figures in (("chromium", got), ("wire client", wire)):
        show(
            f"{AT_ONCE} reviewers at once, each pressing as soon as answered, {client}: "
            f"{ms(figures['app_at_once'])}; baseline, {AT_ONCE} bare sessions: "
            f"{ms(figures['bare_at_once'])}; "
            f"{ratio(figures['app_at_once'], figures['bare_at_once'])} (target <= 1.5x)"
        )
    for level, (bare, app) in wire["paced"].items():
        plural = "s" if level > 1 else ""
        show(
            f"{level} reviewer{plural} pressing every {pace[0]:g}-{pace[1]:g} s, wire client: "
            f"{ms(app)}; baseline, {level} bare session{plural} at the same pace: {ms(bare)}; "
            f"{ratio(app, bare)}" + (" (target: median <= 300 ms)" if level >= 20 else "")
        )
    show(
        f"app RSS after the first reviewer's presses {megabytes(got['rss_one'])}, at the end "
        f"{megabytes(got['rss_end'])}"
    )


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_SMALL", 100_000)
    back_to_back = bench_size("ANNOTATE_BENCH_PRESSES", 40)
    paced = bench_size("ANNOTATE_BENCH_PACED", 12)
    levels = [int(level) for level in numbers("ANNOTATE_BENCH_LEVELS", "1,5,10,20")]
    pace = tuple(numbers("ANNOTATE_BENCH_PACE", "3,8")[:2])
    reviewers = [f"r{i}" for i in range(1, max([*levels, AT_ONCE]) + 1)]
    most = back_to_back + TRACED + paced * len(levels)  # presses of r1
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "label.duckdb"
        started = time.perf_counter()
        fill_store(db, count, sample=(most * 2) // 3 + 10, reviewers=reviewers)
        cookies = session_cookies(db, reviewers)
        show(f"store of {count:,} imported traces built in {time.perf_counter() - started:.0f} s")
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text(BARE_APP)
        content_script = Path(tmp) / "content.py"
        content_script.write_text(CONTENT_APP)
        claims = Path(tmp) / "content.json"  # r1's first claims, drawn as the Label page does
        claims.write_text(json.dumps(content_pages(db, reviewers[0], "bench", most + 10)))
        app, app_url = start_streamlit(ROOT / "app.py", db)
        bare, bare_url = start_streamlit(bare_script, None)
        content, content_url = start_streamlit(
            content_script, None, env={"ANNOTATE_BENCH_CONTENT": str(claims)}
        )
        try:
            urls, pids = (app_url, bare_url, content_url), (app.pid, bare.pid, content.pid)
            got = asyncio.run(in_chromium(urls, pids, reviewers, back_to_back))
            sizes = (back_to_back, paced, levels, pace)
            wire = asyncio.run(with_wire(urls[:2], [cookies[r] for r in reviewers], sizes))
            got["rss_end"] = rss(app.pid)
        finally:
            stop(app)
            stop(bare)
            stop(content)
    report(got, wire, count, pace)
