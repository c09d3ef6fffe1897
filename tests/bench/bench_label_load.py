"""Every press under load is stored and acknowledged, or answered with a message (issue 36).

Eight reviewers in their own chromium contexts press verdicts on one app process as fast as
they read (0 to 0.3 s after the claim is drawn), by key or by click, on a store of imported
traces. Each press is followed on the page's websocket: the run that answers it must finish
(Streamlit's script_finished) and leave either the next claim on screen or a message; a press
that no run answers within PRESS_TIMEOUT, or whose run leaves the same claim and no message,
is silent. The presses are then checked against the store's label events: a press that moved
the page on (or was told "Stored") without its event is lost, a second event on one claim of
one reviewer is duplicated. Baseline, same run: the bare Streamlit counter app under the same
reviewers (30 presses each), where a press is silent if the count does not move.

Sized by ANNOTATE_BENCH_SMALL (traces in the store, default 100,000),
ANNOTATE_BENCH_LOAD_REVIEWERS (default 8) and ANNOTATE_BENCH_LOAD_PRESSES (default 250).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate.store import open_store
from tests.bench.figures import bench_size, show
from tests.bench.label_pages import (
    BARE_APP,
    CHROMIUM_ARGS,
    ROOT,
    fill_store,
    open_label,
    start_streamlit,
    stop,
)

PRESS_TIMEOUT = 30.0  # s: a press no run has answered by then is silent (issue 36 saw 90 s)
# s: after the answering run, for the page to draw what it sent (8 chromiums on two loaded
# cores took over 3 s to draw a claim: a press the page had answered was then counted silent)
SETTLE = PRESS_TIMEOUT
KEYS = "12345"
BARE = 30  # presses per bare session: the baseline's figure is its rate of silent presses
# The page's answer to a press, read when the answering run has finished: the next claim
# (no element of the previous run left stale), or a message of the claim area.
OUTCOME = """before => {
    if (document.querySelector('[data-stale="true"]')) return null;
    const claim = document.querySelector('.annotate-claim');
    const alerts = [...document.querySelectorAll('[data-testid="stAlert"]')]
        .map(a => a.innerText.trim()).filter(Boolean);
    if (alerts.length) return {kind: 'messaged', text: alerts.join(' | ')};
    if (claim && claim.dataset.claim !== before) return {kind: 'moved', text: ''};
    if (!claim && document.body.innerText.includes('queue for this sample is empty'))
        return {kind: 'moved', text: ''};
    return null;
}"""

# Ready for a press: one claim's buttons (the previous claim's are gone from the page).
ONE_CLAIM = """labels => document.querySelectorAll('[class*="st-key-label_button_"]').length
    === labels && !document.querySelector('[data-stale="true"]')"""


@dataclass
class Wire:
    """What one page's websocket said: runs finished, and whether a run is going on."""

    finished: int = 0
    running: bool = False
    log: list[str] = field(default_factory=list)

    def heard(self, payload: Any) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if not isinstance(payload, bytes):
            return
        message = ForwardMsg.FromString(payload)
        kind = message.WhichOneof("type")
        if kind == "session_status_changed":
            self.running = message.session_status_changed.script_is_running
        elif kind == "script_finished" and message.script_finished in (0, 3):
            self.finished += 1  # a run finished, or a fragment's run
        if kind != "delta":
            self.log.append(f"{time.monotonic():.3f} {kind}")


@dataclass
class Press:
    reviewer: str
    claim: str  # "trace#index" of the claim on screen when pressed
    label: str
    by: str  # key | click
    kind: str  # moved | messaged | silent
    text: str
    seconds: float


def listen(page, wire: Wire) -> None:
    page.on("websocket", lambda ws: ws.on("framereceived", wire.heard))


async def until(test, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if test():
            return True
        await asyncio.sleep(0.01)
    return False


async def answer(page, wire: Wire, before: str, finished: int) -> tuple[str, str]:
    """The page's answer to the press just made: (kind, message)."""
    if not await until(lambda: wire.finished > finished, PRESS_TIMEOUT):
        return "silent", "no run finished"
    await until(lambda: not wire.running, PRESS_TIMEOUT)
    try:
        handle = await page.wait_for_function(
            OUTCOME, arg=before, polling=20, timeout=SETTLE * 1000
        )
    except Exception:  # noqa: BLE001 - the run left the same claim and no message
        return "silent", "same claim, no message"
    found = await handle.json_value()
    return found["kind"], found["text"]


async def press_once(page, wire: Wire, reviewer: str, rng: random.Random, labels) -> Press:
    await until(lambda: not wire.running, PRESS_TIMEOUT)
    await page.wait_for_function(ONE_CLAIM, arg=len(labels), polling=20)
    before = await page.locator(".annotate-claim").get_attribute("data-claim")
    await asyncio.sleep(rng.uniform(0, 0.3))
    number = rng.randrange(len(labels))
    finished, started = wire.finished, time.perf_counter()
    if rng.random() < 0.75:
        by = "key"
        await page.evaluate("document.activeElement && document.activeElement.blur()")
        await page.keyboard.press(KEYS[number])
    else:
        by = "click"
        await page.locator(f"[class*='st-key-label_button_{labels[number]}_'] button").first.click()
    kind, text = await answer(page, wire, before or "", finished)
    took = time.perf_counter() - started
    return Press(reviewer, before or "", labels[number], by, kind, text, took)


async def reviewer_presses(browser, url: str, reviewer: str, presses: int, seed: int, labels):
    wire = Wire()
    page = await open_label(browser, url, reviewer, hook=lambda page: listen(page, wire))
    rng = random.Random(seed)
    done = []
    for _ in range(presses):
        if await page.locator(".annotate-claim").count() == 0:
            break  # the queue is empty
        done.append(await press_once(page, wire, reviewer, rng, labels))
        if done[-1].kind == "silent":
            show(f"  silent press of {reviewer} on {done[-1].claim}; websocket: {wire.log[-8:]}")
    await page.context.close()
    return done


async def bare_presses(browser, url: str, presses: int, seed: int) -> list[float | None]:
    """The bare counter app: seconds until the count moved, None when it never did."""
    page = await (await browser.new_context()).new_page()
    page.set_default_timeout(120_000)  # a loaded machine: the first load took over 30 s
    await page.goto(url)
    await page.locator(".bare-count").wait_for()
    rng, times = random.Random(seed), []
    for _ in range(presses):
        await asyncio.sleep(rng.uniform(0, 0.3))
        count = int((await page.locator(".bare-count").inner_text()).split()[-1])
        started = time.perf_counter()
        await page.keyboard.press("1")
        try:
            await page.get_by_text(f"count {count + 1}", exact=True).wait_for(
                timeout=PRESS_TIMEOUT * 1000
            )
            times.append(time.perf_counter() - started)
        except Exception:  # noqa: BLE001 - the press vanished
            times.append(None)
            await page.reload()
            await page.locator(".bare-count").wait_for()
    await page.context.close()
    return times


async def drive(url: str, reviewers: list[str], presses: int, labels) -> list[Press]:
    """Every reviewer pressing at once on the app at `url`."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        runs = await asyncio.gather(
            *(
                reviewer_presses(browser, url, name, presses, seed, labels)
                for seed, name in enumerate(reviewers)
            )
        )
        await browser.close()
    return [press for run in runs for press in run]


async def drive_bare(url: str, reviewers: int, presses: int) -> list[float | None]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        runs = await asyncio.gather(
            *(bare_presses(browser, url, presses, i) for i in range(reviewers))
        )
        await browser.close()
    return [t for run in runs for t in run]


def label_events(db: Path) -> list[dict[str, Any]]:
    store = open_store(db)
    try:
        return store.fetch_dicts(
            "SELECT reviewer, trace_id || '#' || claim_index AS claim, label FROM label_events "
            "ORDER BY event_id"
        )
    finally:
        store.close()


def tally(presses: list[Press], events: list[dict[str, Any]]) -> Counter:
    """presses, stored (events), acknowledged, messaged, silent, lost, duplicated, unasked
    (an event no press acknowledged: stored, but the reviewer was not told)."""
    count = Counter(presses=len(presses), stored=len(events))
    per_claim = Counter((e["reviewer"], e["claim"]) for e in events)
    count["duplicated"] = sum(n - 1 for n in per_claim.values())
    stored = {(e["reviewer"], e["claim"], e["label"]) for e in events}
    told = set()
    for press in presses:
        count[press.kind] += 1
        said_stored = press.text.startswith(f"Stored {press.label} on")
        if press.kind == "moved" or said_stored:
            told.add((press.reviewer, press.claim, press.label))
            count["acknowledged"] += 1
            count["lost"] += (press.reviewer, press.claim, press.label) not in stored
    count["unasked"] = len(stored - told)
    return count


def summary_line(count: Counter) -> str:
    names = ("presses", "stored", "acknowledged", "messaged", "silent", "lost", "duplicated")
    return " / ".join(f"{name} {count[name]}" for name in names) + (
        f" / stored without a press told {count['unasked']}"
    )


def app_labels(db: Path) -> list[str]:
    from annotate.labelling.session import rubric_labels

    store = open_store(db)
    try:
        return [item["label"] for item in rubric_labels(store)[1]]
    finally:
        store.close()


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_SMALL", 100_000)
    reviewers = [f"r{i}" for i in range(1, bench_size("ANNOTATE_BENCH_LOAD_REVIEWERS", 8) + 1)]
    presses = bench_size("ANNOTATE_BENCH_LOAD_PRESSES", 250)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "load.duckdb"
        started = time.perf_counter()
        fill_store(db, count, sample=(presses * 2) // 3 + 10, reviewers=reviewers)
        show(f"store of {count:,} imported traces built in {time.perf_counter() - started:.0f} s")
        labels = app_labels(db)
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text(BARE_APP)
        bare, bare_url = start_streamlit(bare_script, None)
        try:
            bare_times = asyncio.run(drive_bare(bare_url, len(reviewers), min(presses, BARE)))
        finally:
            stop(bare)
        app, url = start_streamlit(ROOT / "app.py", db)
        try:
            started = time.perf_counter()
            done = asyncio.run(drive(url, reviewers, presses, labels))
            took = time.perf_counter() - started
        finally:
            stop(app)
        counts = tally(done, label_events(db))
    answered = [p.seconds for p in done if p.kind != "silent"]
    show(
        f"{len(reviewers)} reviewers x {presses} presses at once, {count:,} traces "
        f"({took:.0f} s): {summary_line(counts)}; median press answered in "
        f"{statistics.median(answered) * 1000:.0f} ms"
    )
    moved = [t for t in bare_times if t is not None]
    show(
        f"baseline, bare streamlit counter, {len(reviewers)} sessions x {min(presses, BARE)} "
        "presses: "
        f"presses {len(bare_times)} / counted {len(moved)} / silent {len(bare_times) - len(moved)}; "
        f"median {statistics.median(moved) * 1000:.0f} ms"
    )
    by = Counter(p.by for p in done)
    messages = Counter(p.text.split(":")[0][:60] for p in done if p.kind == "messaged")
    show(f"presses by key {by['key']}, by click {by['click']}; messages: {dict(messages)}")
