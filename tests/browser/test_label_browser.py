"""A reviewer logs in and labels with the keyboard only; markup in traces shows as text and never runs.

The store is made before the app starts (the app then holds the write lock): three
traces with provided claims, one whose response and context hold live HTML.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import wait_for_session

pytestmark = pytest.mark.browser
READ_MS = 500  # longer than the app's minimum time a claim is shown before a verdict counts

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "reviewer passphrase"
XSS = '<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script>'


def annotate(*args: str, db: Path, stdin: str | None = None) -> str:
    command = [str(Path(sys.executable).with_name("annotate")), *args, "--db", str(db)]
    result = subprocess.run(
        command, cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def rows() -> list[dict[str, Any]]:
    made = []
    for i in range(3):
        sentences = [
            f"Order {100 + i} shipped on 2026-03-0{i + 1}.",
            "Delivery takes 3 days.",
            "Thanks for asking!",
        ]
        if i == 1:
            sentences[2] = f"See {XSS} for details."
        response, claims, start = " ".join(sentences), [], 0
        for sentence in sentences:
            claims.append({"text": sentence, "start": start, "end": start + len(sentence)})
            start += len(sentence) + 1
        made.append(
            {
                "trace_id": f"kb-{i}",
                "feature": "shipping",
                "request": "Where is my order?",
                "context": [
                    f"Order {100 + i} shipped on 2026-03-0{i + 1}. " + (XSS if i == 1 else ""),
                    "Delivery takes 3 days.",
                ],
                "response": response,
                "claims": claims,
            }
        )
    return made


@pytest.fixture(scope="module")
def app_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("label-browser")
    db = folder / "label.duckdb"
    path = folder / "traces.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows()))
    annotate("import", str(path), db=db)
    annotate("sample", "--name", "kb", "--n", "3", "--by", "feature", "--seed", "1", db=db)
    annotate("user", "add", "lena", "--role", "lead", db=db, stdin="lead passphrase\n")
    annotate("user", "add", "rev", "--role", "reviewer", db=db, stdin=PASSWORD + "\n")
    annotate("assign", "--sample", "kb", "--reviewers", "rev", "--per-trace", "1", db=db)
    return db


@pytest.fixture(scope="module")
def expected_status(app_store: Path) -> dict[str, Any]:
    return json.loads(annotate("status", "--json", db=app_store))


def log_in(page: Any, name: str, password: str, path: str = "/") -> None:
    page.goto(path)
    page.get_by_label("User name").fill(name)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Password", exact=True).press("Enter")
    page.get_by_text(f"Signed in as {name}").wait_for()
    wait_for_session(page)


def claim_text(page: Any) -> str:
    return page.locator(".annotate-claim").inner_text()


def test_a_reviewer_labels_every_claim_with_the_keyboard_and_no_markup_runs(
    page: Any, app_url: str
) -> None:
    log_in(page, "rev", PASSWORD)
    page.locator("[data-testid='stPageLink-NavLink']", has_text="Label").click()
    page.locator(".annotate-claim").wait_for()
    saw_markup = False
    shown: list[str] = []
    for done in range(9):
        page.get_by_text(f"{done} / 9 claims done").wait_for()
        before = claim_text(page)
        shown.append(page.locator(".annotate-claim").get_attribute("data-claim") or "")
        saw_markup = (
            saw_markup
            or "<script>window.__xss=2</script>" in page.locator(".annotate-response").inner_text()
        )
        page.evaluate(
            "document.activeElement && document.activeElement.blur()"
        )  # not in a text field
        page.wait_for_timeout(READ_MS)  # a person reads the claim before the verdict
        page.keyboard.press("1" if done % 2 else "3")
        page.get_by_text(f"{done + 1} / 9 claims done").wait_for()
        if done < 8:
            page.wait_for_function(
                "t => document.querySelector('.annotate-claim')?.innerText !== t", arg=before
            )
        assert page.evaluate("window.__xss") is None
    page.get_by_text("Your queue for this sample is empty").wait_for()
    # each claim says which it is (trace#index), so a page or bench tells apart two claims
    # of the same text; the bench waited 60 s on such a pair when it compared texts
    assert len(set(shown)) == 9, shown
    assert all(re.fullmatch(r"[^#]+#\d+", key) for key in shown), shown
    assert saw_markup, "the trace with markup was shown, as literal text"
    assert page.locator("script", has_text="window.__xss").count() == 0
    assert page.locator("img[src='x']").count() == 0


def test_a_reviewer_cannot_reach_lead_pages_by_url(page: Any, app_url: str) -> None:
    log_in(page, "rev", PASSWORD)
    for path in ("/users", "/assign", "/adjudicate", "/import_traces", "/sample", "/activity"):
        page.goto(path)  # still signed in: the session cookie survives a load
        page.get_by_text("Signed in as rev").wait_for()
        page.get_by_role("heading", name="Your queue").wait_for()
        nav = page.locator("[data-testid='stPageLink-NavLink']")
        nav.last.wait_for()  # the sidebar is drawn after the heading on a busy machine
        links = nav.all_inner_texts()
        assert [link.split()[-1] for link in links] == ["Home", "Label"], links
        for heading in ("Users", "Assign", "Adjudicate", "Import", "Sample", "Activity"):
            assert page.get_by_role("heading", name=heading, exact=True).count() == 0
