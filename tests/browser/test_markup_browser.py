"""Untrusted text never renders as markup: Markdown, HTML, KaTeX and remote images in every
field of a trace, in reviewer, judge, sample and file names, viewed on every page.

Every request the browser makes is checked: nothing may leave 127.0.0.1 (requests to any
other host are aborted before they are sent, and recorded as a failure).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.browser.conftest import annotate_cli, running_app, upload_file, wait_for_session

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
LEAD_PASSWORD = "lead passphrase"
CANARY = "canary.invalid"  # the .invalid TLD never resolves; requests are aborted anyway


def payload(tag: str) -> str:
    """Markdown, a colour directive, KaTeX, a remote image, live HTML, a script link, and
    bare addresses GitHub's Markdown would make links of (`www.`, `http://`, `m@x`)."""
    return (
        f"**B-{tag}** :red[R-{tag}] $K_{{{tag}}}$ ![I-{tag}](http://{CANARY}/{tag}.png) "
        f"<img src=x onerror=\"window.__xss='{tag}'\"> <script>window.__xss='{tag}s'</script> "
        f"[L-{tag}](javascript:window.__xss=1) www.{CANARY}/W-{tag} m@{CANARY} # H-{tag}"
    )


def name_payload(tag: str) -> str:
    """Account and judge names have no spaces."""
    return f"**B-{tag}**![I-{tag}](http://{CANARY}/{tag}.png)"


TAGS = ["id", "feat", "risk", "model", "req", "resp", "src", "ctx", "expl", "attr", "note"]
TAGS += ["ra", "rb", "judge", "jl", "file"]


def trace_rows() -> list[dict[str, Any]]:
    rows = []
    for i in range(3):
        first, second = f"Claim one {payload('resp')}.", f"Claim two number {i}."
        response = f"{first} {second}"
        rows.append(
            {
                "trace_id": f"**B-id**{i}:red[R-id]",
                "feature": payload("feat"),
                "risk_category": payload("risk"),
                "model": payload("model"),
                "request": payload("req"),
                "response": response,
                "context": [{"source": payload("src"), "text": payload("ctx")}],
                "claims": [
                    {"text": first, "start": 0, "end": len(first)},
                    {"text": second, "start": len(first) + 1, "end": len(response)},
                ],
                "judge": [
                    {
                        "judge": name_payload("judge"),
                        "level": "claim",
                        "claim": 0,
                        "label": "unsupported",
                        "explanation": payload("expl"),
                    }
                ],
                "attributes": {"tenant": payload("attr")},
            }
        )
    return rows


@pytest.fixture(scope="module")
def markup_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("markup")
    db = folder / "markup.duckdb"
    traces = folder / "traces.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in trace_rows()))
    annotate_cli("import", str(traces), db=db)
    annotate_cli("user", "add", "lena", "--role", "lead", db=db, stdin=LEAD_PASSWORD + "\n")
    annotate_cli("sample", "--name", "**B-sample**", "--n", "3", "--seed", "1", db=db)
    annotate_cli(
        "assign", "--sample", "**B-sample**", "--reviewers", "lena", "--per-trace", "1", db=db
    )
    labels = folder / "labels.jsonl"
    votes = []
    for row in trace_rows():
        for claim in (0, 1):
            for reviewer, label in (
                (name_payload("ra"), "supported"),
                (name_payload("rb"), "contradicted"),
            ):
                votes.append(
                    {"trace_id": row["trace_id"], "claim": claim, "reviewer": reviewer,
                     "label": label, "note": payload("note")}
                )  # fmt: skip
    labels.write_text("".join(json.dumps(v) + "\n" for v in votes))
    annotate_cli("import-labels", str(labels), db=db, ok=(0, 1))
    return db


PAGES = [
    ("/", "annotate"),
    ("/label", "Label"),
    ("/adjudicate", "Adjudicate"),
    ("/agreement", None),
    ("/calibration", None),
    ("/activity", "Activity"),
    ("/sample", "Sample"),
    ("/assign", "Assign"),
    ("/users", "Users"),
    ("/import_traces", "Import"),
]


class Watch:
    """Every request of a browser context: local ones go through, any other is aborted."""

    def __init__(self, context: Any) -> None:
        self.outside: list[str] = []
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if urlparse(url).hostname in ("127.0.0.1", "localhost") or url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()


def assert_inert(page: Any, where: str) -> None:
    assert page.evaluate("window.__xss") is None, where
    assert page.locator(".katex, .katex-html, math").count() == 0, where
    assert page.locator(f"img[src*='{CANARY}'], img[src='x']").count() == 0, where
    assert page.locator("a[href^='javascript']").count() == 0, where
    assert page.locator(f"a[href*='{CANARY}']").count() == 0, where  # no autolinks from data
    assert page.locator("script", has_text="__xss").count() == 0, where
    assert page.locator("h1, h2, h3, h4, h5, h6", has_text=re.compile(r"^H-")).count() == 0, where
    text = page.locator("body").inner_text()
    for tag in TAGS:  # wherever a payload shows, it shows literally
        assert text.count(f"B-{tag}") == text.count(f"**B-{tag}**"), (where, tag)
        assert text.count(f"R-{tag}") == text.count(f":red[R-{tag}]"), (where, tag)


def sign_in(page: Any) -> None:
    page.goto("/")
    page.get_by_label("User name").fill("lena")
    page.get_by_label("Password", exact=True).fill(LEAD_PASSWORD)
    page.get_by_label("Password", exact=True).press("Enter")
    page.get_by_text("Signed in as lena").wait_for()
    wait_for_session(page)


def test_payloads_in_every_field_render_as_text_on_every_page(
    chromium: Path, browser: Any, markup_store: Path, tmp_path: Path
) -> None:
    with running_app(markup_store) as url:
        context = browser.new_context(base_url=url, viewport={"width": 1400, "height": 1600})
        watch = Watch(context)
        page = context.new_page()
        sign_in(page)
        seen = set()
        for path, heading in PAGES:
            page.goto(path)
            page.get_by_text("Signed in as lena").wait_for()
            if heading:
                page.get_by_role("heading", name=heading).first.wait_for()
            page.wait_for_timeout(1500)
            assert_inert(page, path)
            seen.update(t for t in TAGS if f"B-{t}" in page.locator("body").inner_text())
        # Home: open the payload trace in the browser
        page.goto("/")
        page.get_by_label("Trace id starts with").fill("**B-id**")
        page.get_by_label("Trace id starts with").press("Enter")
        page.get_by_text("Claim one").first.wait_for()
        page.wait_for_timeout(1000)
        assert_inert(page, "home trace")
        seen.update(t for t in TAGS if f"B-{t}" in page.locator("body").inner_text())
        # Import: an uploaded file whose name is a payload
        upload = tmp_path / "**B-file**.jsonl"
        upload.write_text(json.dumps({"trace_id": "u-1", "response": "r", "context": ["c"]}) + "\n")
        page.goto("/import_traces")
        upload_file(page, upload)
        page.get_by_role("button", name="Import", exact=True).click()
        page.get_by_text("imported 1").wait_for(timeout=90_000)  # a loaded CI machine
        assert_inert(page, "import of a file named with markup")
        seen.update(t for t in TAGS if f"B-{t}" in page.locator("body").inner_text())
        outside = list(watch.outside)
        context.close()
    assert outside == [], outside
    # The payloads were really on the pages, as text (not only absent):
    assert {"req", "resp", "ctx", "src", "ra", "file", "feat"} <= seen, seen
