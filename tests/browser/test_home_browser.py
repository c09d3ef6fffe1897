"""Home and Import in a real browser: figures from `annotate status`, navigation, inert HTML."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import WAIT_MS, upload_file

pytestmark = pytest.mark.browser


def metric(page: Page, label: str) -> Locator:
    label_cell = page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    return page.get_by_test_id("stMetric").filter(has=label_cell)


def selectbox(page: Page, label: str) -> Locator:
    label_cell = page.get_by_test_id("stWidgetLabel").get_by_text(label, exact=True)
    return page.get_by_test_id("stSelectbox").filter(has=label_cell)


def choose(page: Page, label: str, option: str) -> None:
    """Type into a Streamlit selectbox and take the match, as a keyboard user would."""
    box = selectbox(page, label)
    box.locator("input").click()
    box.locator("input").fill(option)
    page.keyboard.press("Enter")
    expect(page.get_by_role("listbox")).to_have_count(0)
    expect(box).to_have_count(1)  # while the page reruns, the old box may still be drawn
    expect(box.locator("input")).to_have_value(option)


def open_home(page: Page, lead: tuple[str, str]) -> None:
    """Log in as the lead; Home is the default page behind the login."""
    name, password = lead
    page.goto("/")
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Password", exact=True).press("Enter")
    expect(page.get_by_text(f"Signed in as {name}")).to_be_visible(timeout=WAIT_MS)
    expect(metric(page, "Traces")).to_be_visible(timeout=WAIT_MS)


def test_home_shows_the_trace_count_and_features_from_status(
    page: Page, lead: tuple[str, str], expected_status: dict[str, Any]
) -> None:
    open_home(page, lead)
    expect(metric(page, "Traces").get_by_test_id("stMetricValue")).to_have_text(
        f"{expected_status['traces']:,}"
    )
    expect(metric(page, "Judgeable").get_by_test_id("stMetricValue")).to_have_text(
        f"{expected_status['judgeable']:,}"
    )
    feature = next(iter(expected_status["by_feature"]))
    selectbox(page, "Feature").locator("input").click()
    page.keyboard.press("ArrowDown")  # opens the list if the click only focused the box
    expect(page.get_by_role("option", name=feature, exact=True)).to_be_visible()
    page.keyboard.press("Escape")


def test_sidebar_navigation_opens_the_import_page(page: Page, lead: tuple[str, str]) -> None:
    open_home(page, lead)
    page.get_by_test_id("stSidebar").get_by_role("link", name="Import").click()
    expect(page.get_by_role("heading", name="Import", level=1)).to_be_visible(timeout=WAIT_MS)
    expect(page).to_have_url(re.compile(r"/import_traces/?$"))
    expect(page.get_by_text("Upload a file")).to_be_visible()


def test_html_in_a_trace_is_shown_as_literal_text_and_never_runs(
    page: Page, lead: tuple[str, str], xss_trace: dict[str, Any]
) -> None:
    open_home(page, lead)
    choose(page, "Feature", xss_trace["feature"])
    choose(page, "Trace", xss_trace["trace_id"])
    response = page.get_by_test_id("stText").filter(has_text="window.__xss=2")
    expect(response).to_have_text(xss_trace["response"], timeout=WAIT_MS)
    # Streamlit's sanitiser would strip onerror even from unsafe HTML, so the element
    # itself must be absent: its presence means the text went through an HTML path.
    expect(page.locator('img[src="x"]')).to_have_count(0)
    expect(page.locator("script", has_text="__xss")).to_have_count(0)
    page.wait_for_timeout(500)  # give an injected onerror handler time to fire
    assert page.evaluate("typeof window.__xss") == "undefined"


def test_an_upload_and_a_typed_path_together_import_neither(
    page: Page, lead: tuple[str, str], tmp_path: Path
) -> None:
    """Catches the upload being imported without a word while the lead had also typed a
    path: which file went in was a guess."""
    open_home(page, lead)
    page.goto("/import_traces")
    upload = tmp_path / "both.jsonl"
    upload.write_text('{"trace_id": "both-1", "response": "r", "context": ["c"]}\n')
    upload_file(page, upload)
    path_box = page.get_by_label(
        "…or a file in the import folder (path relative to it)", exact=True
    )
    path_box.fill("other.jsonl")
    path_box.press("Enter")
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_text("Both an upload and a path are given")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_text(re.compile(r"imported \d+"))).to_have_count(0)
