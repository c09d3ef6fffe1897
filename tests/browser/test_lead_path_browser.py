"""The whole path in a browser, with no shell: a lead creates the store's first account, uploads
a trace file, draws a sample, makes its claims, adds two reviewers and assigns; each reviewer
labels with the keyboard only; the lead adjudicates and opens agreement, calibration and rates.

Each step is screenshotted into a temporary folder. On every page: no command-line flag in the
text, no exception. Every request the browser makes stays on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import running_app, wait_for_session

pytestmark = pytest.mark.browser
READ_MS = 500  # longer than the app's minimum time a claim is shown before a verdict counts
VIEWPORT = {"width": 1400, "height": 1000}
LEAD, LEAD_PASSWORD = "lena", "lead passphrase"
REVIEWERS = {"rita": "rita passphrase", "omar": "omar passphrase"}
FLAG = re.compile(r"--[a-z]")
POLICY = " ".join(
    f"Section {n}. Invoices are issued monthly; a late payment after {n + 10} days adds a fee "
    "of two percent, and disputes go to the billing team within sixty days of the invoice date."
    for n in range(1, 30)
)


def trace_rows() -> list[dict[str, Any]]:
    """Eight judgeable traces without claims (the app makes them), with response-level verdicts."""
    rows = []
    for i in range(8):
        amount = 40 + i
        rows.append(
            {
                "trace_id": f"path-{i}",
                "timestamp": f"2026-03-0{1 + i % 7}T12:00:00Z",
                "feature": "billing_qa" if i % 2 else "hr_policy",
                "risk_category": "financial",
                "model": "m-1",
                "request": "What do I owe?",
                "context": [
                    f"Invoice INV-{100 + i} is for ${amount}.00, due in 30 days.",
                    {"source": "kb/billing-policy", "text": POLICY},  # long: pushes things down
                ],
                "response": f"Invoice INV-{100 + i} is for ${amount}.00. It is due in 30 days.",
                "judge": [
                    {
                        "judge": "prod-judge",
                        "level": "response",
                        "label": "unsupported" if i % 3 == 0 else "supported",
                    }
                ],
            }
        )
    return rows


class Browser:
    """One signed-in user's tab; every request of every tab is recorded in `requests`."""

    def __init__(self, browser: Any, url: str, shots: Path, requests: list[str]) -> None:
        self.context = browser.new_context(base_url=url, viewport=VIEWPORT)
        self.context.on("request", lambda request: requests.append(request.url))
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.shots = shots

    def sign_in(self, name: str, password: str, first: bool = False, where: str = "/") -> None:
        page = self.page
        page.goto(where)
        page.get_by_label("User name").fill(name)
        page.get_by_label("Password", exact=True).fill(password)
        if first:
            page.get_by_label("Repeat the password").fill(password)
            page.get_by_label("Repeat the password").press("Enter")
        else:
            page.get_by_label("Password", exact=True).press("Enter")
        page.get_by_text(f"Signed in as {name}").wait_for()
        wait_for_session(page)

    def open(self, stem: str, title: str) -> None:
        self.page.goto(f"/{stem}")
        self.page.get_by_role("heading", name=title).first.wait_for()
        self.settle()

    def settle(self) -> None:
        """Wait until the app has finished running the page: no status widget, nothing stale."""
        self.page.wait_for_timeout(300)
        self.page.locator("[data-testid='stStatusWidget']").wait_for(state="detached")
        self.page.wait_for_function("!document.querySelector('[data-stale=\"true\"]')")

    def check(self, shot: str, expect: str | None = None) -> str:
        """Screenshot (once `expect` shows), then the page's text: no flag, no exception."""
        if expect:
            self.page.get_by_text(expect).first.wait_for()
        self.settle()
        self.page.screenshot(path=str(self.shots / f"{shot}.png"), full_page=True)
        text = self.page.locator("body").inner_text()
        assert not FLAG.findall(text), (shot, FLAG.findall(text), text[:2000])
        assert self.page.locator("[data-testid='stException']").count() == 0, (shot, text[:2000])
        return text


def test_a_lead_goes_from_a_file_to_rates_without_a_shell(
    chromium: Path, browser: Any, tmp_path: Path
) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    upload = tmp_path / "traces.jsonl"
    upload.write_text("".join(json.dumps(r) + "\n" for r in trace_rows()), encoding="utf-8")
    requests: list[str] = []
    buttons_outside: list[Any] = []
    cell_heights: list[float] = []
    with running_app(tmp_path / "fresh.duckdb") as url:
        lead = Browser(browser, url, shots, requests)
        lead.page.goto("/")
        lead.page.get_by_text("Create the first lead").wait_for()
        lead.check("01-first-lead")
        lead.sign_in(LEAD, LEAD_PASSWORD, first=True)
        lead.check("02-home-empty", "import a trace file on the Import page first")
        _import(lead)
        _sample_and_claims(lead)
        _add_reviewers(lead)
        _assign(lead)
        for number, (name, password) in enumerate(REVIEWERS.items()):
            reviewer = Browser(browser, url, shots, requests)
            reviewer.sign_in(name, password, where="/label")
            buttons_outside += _label_by_keyboard(reviewer, name, disagree=number == 1)
            reviewer.context.close()
        _adjudicate(lead)
        for stem, title in (
            ("agreement", "Agreement between reviewers"),
            ("calibration", "Calibration of the judge"),
            ("rates", "Hallucination rates"),
        ):
            lead.open(stem, title)
            lead.check(f"20-{stem}")
            if stem == "calibration":
                cell_heights.extend(_confusion_cell_heights(lead.page))
        lead.page.goto("/")
        lead.check("21-home-path", "Where the sample stands")
        lead.context.close()
    assert len(list(shots.glob("*.png"))) >= 14
    _assert_all_local(requests, url)
    assert not buttons_outside, buttons_outside[:5]  # verdict buttons at 1400x1000, every claim
    assert len(cell_heights) == 4 and min(cell_heights) >= 60, cell_heights  # not ~10 px rows


def _confusion_cell_heights(page: Any) -> list[float]:
    """The drawn height of each cell of the Calibration page's confusion matrix; and no cell
    lies under the statistics table beside it (the "supported" column was half hidden)."""
    chart = page.locator("[data-testid='stVegaLiteChart']").first
    cells = chart.locator("svg .mark-rect.role-mark path")
    cells.first.wait_for()
    boxes = cells.evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.right, r.height] })"
    )
    table = page.locator("[data-testid='stDataFrame']").first.bounding_box()
    assert max(right for right, _ in boxes) <= table["x"], (boxes, table)
    return [height for _, height in boxes]


def _import(lead: Browser) -> None:
    lead.open("import_traces", "Import")
    lead.page.locator("input[type='file']").set_input_files(str(lead.shots.parent / "traces.jsonl"))
    lead.page.get_by_text("traces.jsonl").first.wait_for()
    lead.page.get_by_role("button", name="Import", exact=True).click()
    lead.page.get_by_text("imported 8, rejected 0").wait_for()
    lead.check("03-imported")
    lead.page.get_by_role("link", name="Go to Sample").click()
    lead.page.get_by_role("heading", name="Sample").first.wait_for()


def _sample_and_claims(lead: Browser) -> None:
    page = lead.page
    lead.settle()
    page.get_by_label("Sample name").fill("pilot")
    page.get_by_label("Traces to draw (n)").fill("8")
    page.get_by_label("Traces to draw (n)").press("Tab")
    page.get_by_role("button", name="Show the plan").click()
    page.get_by_text("Plan: 8 of 8 traces").wait_for()
    lead.check("04-plan")
    page.get_by_role("button", name="Draw sample pilot").click()
    page.get_by_text("Drew 8 traces into pilot").wait_for()
    text = lead.check("05-drawn")
    assert page.get_by_role("button", name="Draw sample pilot").count() == 0
    assert "8 traces of pilot without claims yet" in text
    page.get_by_role("button", name="Make claims").click()
    page.get_by_text("Made 16 claims for 8 traces").wait_for()
    text = lead.check("06-claims")
    assert "Every trace of pilot has its claims." in text and "Next: Assign" in text


def _add_reviewers(lead: Browser) -> None:
    lead.open("users", "Users")
    for index, (name, password) in enumerate(REVIEWERS.items()):
        lead.page.get_by_label("Name", exact=True).fill(name)
        field = lead.page.get_by_label("Password (8+ characters)", exact=True)
        field.fill(password)
        if index % 2:  # a double Enter: the answer must name this account, not the one before
            field.press("Enter")
            lead.page.keyboard.press("Enter")
        else:
            lead.page.get_by_role("button", name="Add user").click()
        answered(lead, f"Added {name} (reviewer).")
        lead.settle()
    lead.check("07-reviewers")


def answered(lead: Browser, text: str) -> None:
    """Wait for `text`; if it never shows, fail with what the page shows instead."""
    try:
        lead.page.get_by_text(text).wait_for()
    except PlaywrightTimeout:
        shown = lead.page.locator("body").inner_text()
        raise AssertionError(f"{text!r} never showed; the page: {shown[:3000]}") from None


def _assign(lead: Browser) -> None:
    page = lead.page
    lead.open("assign", "Assign")
    for name in REVIEWERS:
        page.locator("[data-testid='stMultiSelect']").first.click()
        page.get_by_role("option", name=name).click()
        page.keyboard.press("Escape")
        lead.settle()
    page.get_by_role("button", name="Assign", exact=True).click()
    page.get_by_text("Added 16 assignments").wait_for()
    text = lead.check("08-assigned")
    assert "Next: Label" in text


def _label_by_keyboard(reviewer: Browser, name: str, disagree: bool) -> list[Any]:
    """Every claim of the queue by key press; the verdict buttons' boxes that were not wholly
    in the 1400x1000 window (none when every claim showed every button in view)."""
    page = reviewer.page
    page.locator(".annotate-claim").wait_for()
    progress = page.get_by_text("claims done in pilot")
    total = int(progress.inner_text().split(" / ")[1].split()[0])
    assert total == 16
    reviewer.check(f"1{len(name)}-{name}-label")
    outside: list[Any] = []
    for done in range(total):
        before = page.locator(".annotate-claim").inner_text()
        outside += _buttons_out_of_view(page)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.wait_for_timeout(READ_MS)  # a person reads the claim before the verdict
        page.keyboard.press("3" if disagree and done < 2 else "1")
        if done + 1 < total:
            page.wait_for_function(
                "t => document.querySelector('.annotate-claim')?.innerText !== t", arg=before
            )
    page.get_by_text("Your queue for this sample is empty").wait_for()
    reviewer.check(f"1{len(name)}-{name}-done")
    return outside


def _box(page: Any, button: Any) -> Any:
    """The button's box once it is drawn: a rerun may replace the element between the wait and
    the measure (the box is then None), so measure again, up to five seconds."""
    for _ in range(50):
        button.wait_for(state="visible")
        box = button.bounding_box()
        if box is not None:
            return box
        page.wait_for_timeout(100)
    return None


def _buttons_out_of_view(page: Any) -> list[Any]:
    buttons = {
        key: page.get_by_role("button", name=re.compile(rf"^{key} · ")).first for key in range(1, 6)
    }
    boxes = {key: _box(page, button) for key, button in buttons.items()}
    return [
        (key, box)
        for key, box in boxes.items()
        if box is None
        or box["x"] < 0
        or box["y"] < 0
        or box["x"] + box["width"] > VIEWPORT["width"]
        or box["y"] + box["height"] > VIEWPORT["height"]
    ]


def _adjudicate(lead: Browser) -> None:
    page = lead.page
    lead.open("adjudicate", "Adjudicate")
    page.get_by_text("2 claims where reviewers disagree").wait_for()
    lead.check("15-disagreements")
    page.get_by_label("Reason (auditors read it)").fill("the context states the amount")
    page.get_by_role("button", name="Record final label").click()
    page.get_by_text("The original votes stay.").wait_for()
    page.get_by_text("1 claim where reviewers disagree").wait_for()  # the list followed
    lead.check("16-adjudicated")


def _assert_all_local(requests: list[str], url: str) -> None:
    assert requests, "no request was recorded"
    outside = [
        r
        for r in requests
        if urlparse(r).scheme not in ("data", "blob") and urlparse(r).hostname != "127.0.0.1"
    ]
    assert outside == [], outside
    assert any(r.startswith(url) for r in requests)
