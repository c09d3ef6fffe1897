"""A new user's path on the bundled sample store: create the first lead, take the demo sample,
label ten claims with the keyboard only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser
READ_MS = 500  # longer than the app's minimum time a claim is shown before a verdict counts

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "first lead passphrase"


def annotate(*args: str, db: Path) -> str:
    command = [str(Path(sys.executable).with_name("annotate")), *args, "--db", str(db)]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def app_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the bundled sample store, exactly as `make run` makes it."""
    db = tmp_path_factory.mktemp("first-lead") / "annotate.duckdb"
    annotate("init", db=db)
    return db


@pytest.fixture(scope="module")
def expected_status(app_store: Path) -> dict[str, Any]:
    return json.loads(annotate("status", "--json", db=app_store))


def test_new_user_creates_the_first_lead_takes_the_demo_sample_and_labels_ten_claims(
    page: Any, app_url: str, expected_status: dict[str, Any]
) -> None:
    assert expected_status["traces"] >= 2000
    page.goto("/")
    page.get_by_text("Create the first lead").wait_for()
    page.get_by_label("User name").fill("lena")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Repeat the password").fill(PASSWORD)
    page.get_by_label("Repeat the password").press("Enter")
    page.get_by_text("Signed in as lena").wait_for()
    page.locator("[data-testid='stPageLink-NavLink']", has_text="Assign").click()
    page.get_by_role("button", name="Assign the demo sample to me and start labelling").click()
    page.locator(".annotate-claim").wait_for()
    progress = page.get_by_text("claims done in demo")
    start = progress.inner_text()
    assert start.startswith("0 / ")
    total = int(start.split(" / ")[1].split()[0])
    assert total >= 10
    for done in range(10):
        before = page.locator(".annotate-claim").inner_text()
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.wait_for_timeout(READ_MS)  # a person reads the claim before the verdict
        page.keyboard.press(str(1 + done % 5))
        page.get_by_text(f"{done + 1} / {total} claims done").wait_for()
        page.wait_for_function(
            "t => document.querySelector('.annotate-claim')?.innerText !== t", arg=before
        )
    page.keyboard.press("b")  # Back, by keyboard too
    page.get_by_text("Changing your last verdict").wait_for()
