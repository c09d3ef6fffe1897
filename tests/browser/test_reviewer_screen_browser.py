"""The reviewer's screen and the charts at 1400x1000, in chromium, with every request recorded.

Labelling: verdict buttons in view beside a long context, the rubric in the sidebar, the key
list on `?`, keys in the note only type (Ctrl+Enter leaves it), the error type control's
empty state, Back with the verdict given. Charts: confusion cells of a real height, agreement
over time with a negative alpha inside its y axis. No request leaves 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from annotate.store import open_store
from tests.browser.conftest import annotate_cli, running_app, wait_for_session
from tests.labelling_data import write_labelling_traces

pytestmark = pytest.mark.browser

PASSWORD = "reviewer passphrase"
LEAD_PASSWORD = "lead passphrase"
VIEWPORT = {"width": 1400, "height": 1000}
FILLER = "Background paragraph about the account history that does not decide the claim. " * 6


@pytest.fixture(scope="module")
def store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twelve traces with long contexts; `rev` labels them; r1 and r2 agree in the first week
    and disagree on everything two weeks later (a negative alpha)."""
    folder = tmp_path_factory.mktemp("screen")
    db = folder / "screen.duckdb"
    traces = write_labelling_traces(folder / "traces.jsonl")
    rows = [json.loads(line) for line in traces.read_text().splitlines()]
    for row in rows:
        row["context"] += [f"{FILLER}\n\n{FILLER}" for _ in range(6)]
    traces.write_text("".join(json.dumps(row) + "\n" for row in rows))
    annotate_cli("init", "--no-sample", db=db)
    annotate_cli("import", str(traces), db=db)
    annotate_cli("sample", "--name", "demo", "--n", "12", "--by", "feature", "--seed", "1", db=db)
    annotate_cli("user", "add", "lena", "--role", "lead", db=db, stdin=LEAD_PASSWORD + "\n")
    annotate_cli("user", "add", "rev", "--role", "reviewer", db=db, stdin=PASSWORD + "\n")
    annotate_cli("assign", "--sample", "demo", "--reviewers", "rev", "--per-trace", "1", db=db)
    labels = folder / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in two_weeks_of_labels()))
    annotate_cli("import-labels", str(labels), db=db)
    return db


def two_weeks_of_labels() -> list[dict[str, Any]]:
    rows = []
    for t in range(12):
        for claim in range(3):
            wrong = claim == 1 and t % 2 == 0
            first = "contradicted" if wrong else "supported"
            opposite = {"supported": "contradicted", "contradicted": "supported"}
            week = "2026-03-02T10:00:00Z" if t < 6 else "2026-03-16T10:00:00Z"
            for reviewer in ("r1", "r2"):
                label = first if t < 6 or reviewer == "r1" else opposite[first]
                if t >= 6 and claim != 1:  # the second week: every pair disagrees, both ways
                    label = ("supported", "contradicted")[(claim + (reviewer == "r2")) % 2]
                rows.append(
                    {
                        "trace_id": f"lt-{t:03d}",
                        "claim": claim,
                        "reviewer": reviewer,
                        "label": label,
                        "created_at": week,
                    }
                )
    return rows


def open_signed_in(browser: Any, url: str, path: str, name: str, password: str) -> tuple[Any, list]:
    context = browser.new_context(base_url=url, viewport=VIEWPORT)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(path)
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Password", exact=True).press("Enter")
    wait_for_session(page)
    return page, requests


def assert_all_local(requests: list[str]) -> None:
    outside = [
        u
        for u in requests
        if urlparse(u).scheme not in ("data", "blob") and urlparse(u).hostname != "127.0.0.1"
    ]
    assert requests and not outside, outside


def in_view(page: Any, locator: Any) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"]


def error_type_shown(page: Any) -> str:
    """What the error type control shows: its text, and its input's value or placeholder."""
    box = page.locator("[data-testid='stSelectbox']").filter(has_text="Error type")
    return box.evaluate(
        "el => el.innerText + ' | ' + [...el.querySelectorAll('input')]"
        ".map(i => i.value || i.placeholder).join(',')"
    )


def error_type_becomes(page: Any, wanted: str, exact: bool = True) -> str:
    """The error type control once it shows `wanted` (the whole text, or a part of it), waiting
    up to 10 s: under load a claim's controls are drawn a moment after its text."""
    shown = error_type_shown(page)
    for _ in range(100):
        if (shown == wanted) if exact else (wanted in shown):
            break
        page.wait_for_timeout(100)
        shown = error_type_shown(page)
    return shown


def claim_text(claim: Any) -> str:
    """The claim on screen. A rerun (a closed dialog, a press) may leave the claim drawn
    before it beside the one drawn again until the run ends, when Streamlit clears the stale
    element: wait for one."""
    expect(claim).to_have_count(1, timeout=10_000)
    return str(claim.inner_text())


def blur(page: Any) -> None:
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(600)  # the claim has been read (the minimum dwell)


def events(db: Path) -> list[dict[str, Any]]:
    store = open_store(db)
    try:
        return store.fetch_dicts(
            "SELECT label, error_type, note FROM label_events WHERE reviewer = 'rev' ORDER BY event_id"
        )
    finally:
        store.close()


def vega_boxes(page: Any, chart: Any, selector: str) -> list[dict[str, float]]:
    return chart.locator(selector).evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); "
        "return {y: r.y, height: r.height, width: r.width, text: e.textContent}; })"
    )


def test_the_charts_have_real_rows_and_a_y_axis_holding_a_negative_alpha(
    chromium: Path, browser: Any, store_file: Path, tmp_path: Path
) -> None:
    with running_app(store_file) as url:
        page, requests = open_signed_in(browser, url, "/calibration", "lena", LEAD_PASSWORD)
        page.get_by_role("heading", name="Calibration of the judge").wait_for()
        confusion = page.locator(".stVegaLiteChart, [data-testid='stVegaLiteChart']").first
        confusion.locator("svg .mark-rect.role-mark path").first.wait_for()
        page.wait_for_timeout(1000)
        page.screenshot(path=str(tmp_path / "calibration.png"))
        cells = vega_boxes(page, confusion, "svg .mark-rect.role-mark path")
        assert len(cells) == 4 and min(c["height"] for c in cells) >= 60, cells

        page.goto("/agreement")
        page.get_by_role("heading", name="Agreement between reviewers").wait_for()
        chart = page.locator("[data-testid='stVegaLiteChart']").last
        chart.locator("svg .mark-symbol.role-mark path").first.wait_for()
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)
        page.screenshot(path=str(tmp_path / "agreement.png"))
        ticks = [t["text"] for t in vega_boxes(page, chart, "svg .role-axis-label text")]
        assert any(t.startswith(("−", "-")) for t in ticks), ticks
        (y_axis,) = [
            box
            for box in chart.locator("svg .role-axis").evaluate_all(
                "els => els.map(e => { const r = e.getBoundingClientRect(); "
                "return {y: r.y, height: r.height, width: r.width}; })"
            )
            if box["height"] > box["width"]
        ]
        points = vega_boxes(page, chart, "svg .mark-symbol.role-mark path")
        assert len(points) == 4  # two weeks x (agreement, alpha)
        for point in points:  # inside the axis, not drawn over its labels
            centre = point["y"] + point["height"] / 2
            assert y_axis["y"] - 1 <= centre <= y_axis["y"] + y_axis["height"] + 1, (point, y_axis)
        assert_all_local(requests)


def test_the_reviewer_labels_by_keys_with_the_buttons_rubric_and_context_in_view(
    chromium: Path, browser: Any, store_file: Path, tmp_path: Path
) -> None:
    with running_app(store_file) as url:
        page, requests = open_signed_in(browser, url, "/label", "rev", PASSWORD)
        claim = page.locator(".annotate-claim")
        claim.wait_for()
        page.wait_for_timeout(1000)
        page.screenshot(path=str(tmp_path / "label.png"))
        for name in ("Back", "Skip: unclear context"):  # whole labels, not "B…"
            label = page.get_by_role("button", name=name).get_by_test_id("stMarkdownContainer")
            assert label.evaluate("e => e.scrollWidth <= e.clientWidth"), name
        # the context is long, yet the claim and every verdict button are in the window
        assert page.locator(".annotate-context").count() == 8
        assert in_view(page, claim)
        for name in ("1 · supported", "3 · contradicted", "5 · not a claim"):
            assert in_view(page, page.get_by_role("button", name=name)), name
        assert page.locator(".annotate-passage").count() >= 1  # the passages sharing most
        assert page.get_by_text("in the context").first.is_visible()
        sidebar = page.locator("[data-testid='stSidebar']")
        assert "the context says something incompatible" in sidebar.inner_text()  # the rubric
        blur(page)
        page.keyboard.press("?")
        page.get_by_role("dialog").get_by_text("Ctrl+Enter").wait_for()
        page.get_by_role("dialog").get_by_role("button", name="Close").click()
        page.get_by_role("dialog").wait_for(state="detached")
        # Keys typed in the note only type: nothing is submitted, skipped or gone back.
        first = claim_text(claim)
        empty = error_type_shown(page)
        assert empty.endswith("| none"), empty
        note = page.get_by_role("textbox", name="Note (optional)")
        note.click()
        page.keyboard.type("looks fine")
        for key in ("3", "s", "b", "Enter"):
            page.keyboard.press(key)
        page.wait_for_timeout(1500)
        assert note.input_value() == "looks fine3sb\n"
        assert claim_text(claim) == first and page.get_by_text("0 / 36 claims done").is_visible()
        page.keyboard.press("Backspace")
        page.keyboard.press("Control+Enter")  # keeps the note, returns to the verdict keys
        page.wait_for_function("document.activeElement.tagName !== 'TEXTAREA'")
        page.wait_for_timeout(600)
        page.keyboard.press("3")
        page.get_by_text("1 / 36 claims done").wait_for()
        page.wait_for_function(
            "t => document.querySelector('.annotate-claim')?.innerText !== t", arg=first
        )
        # The next claim's empty note may be drawn a moment after its text (under load).
        expect(note).to_have_value("", timeout=10_000)

        # An error type, then the next claim shows the same empty control as the first did.
        second = claim_text(claim)
        page.get_by_label("Error type (unsupported labels)").click()
        page.get_by_role("option", name="number").click()
        blur(page)
        page.keyboard.press("2")
        page.get_by_text("2 / 36 claims done").wait_for()
        page.wait_for_function(
            "t => document.querySelector('.annotate-claim')?.innerText !== t", arg=second
        )
        assert error_type_becomes(page, empty) == empty

        # Back shows the verdict given, with its error type, in the buttons and the controls.
        blur(page)
        page.keyboard.press("b")
        page.get_by_text("Changing your last verdict, which was partially_supported").wait_for()
        expect(claim).to_have_text(second, timeout=10_000)  # drawn after the caption, same run
        assert "number" in error_type_becomes(page, "number", exact=False)
        skip = page.get_by_role("button", name="Skip: unclear context")
        assert skip.is_visible()  # the reason a skip records, before pressing it
        assert_all_local(requests)
    stored = events(store_file)
    assert [(e["label"], e["error_type"], e["note"]) for e in stored] == [
        ("contradicted", None, "looks fine3sb"),
        ("partially_supported", "number", None),
    ]


def test_every_page_of_a_lead_loads_nothing_from_outside(
    chromium: Path, browser: Any, store_file: Path
) -> None:
    with running_app(store_file) as url:
        page, requests = open_signed_in(browser, url, "/", "lena", LEAD_PASSWORD)
        links = page.locator("[data-testid='stPageLink-NavLink']")
        links.first.wait_for()
        names = links.all_inner_texts()
        assert "Questions" in names and len(names) >= 14
        for name in names:
            links.filter(has_text=name).first.click()
            page.locator("h1").first.wait_for()
            page.wait_for_timeout(1500)  # fonts, images and charts of the page have loaded
        assert_all_local(requests)
        assert any("/_stcore/" in u or "/static/" in u for u in requests)
