"""Every Markdown we write, made from hostile data, opened in an HTML-enabled Markdown viewer in
chromium: it loads nothing and runs nothing, and each payload reads as the text it was.

The store has a feature, a reviewer, a rubric name, instructions and label definitions
drafted with payloads (img onerror, script, javascript: links, raw HTML, autolinks). The
exports: the rubric's Markdown (with its calibration card, as `annotate rubric export
--format markdown` and the Rubric page write it), the card alone (`annotate rubric show`),
and report.md. markdown-it's gfm-like preset passes raw HTML through and linkifies, as many
viewers do.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from rubric_data import label_rows, trace_rows

from annotate.agreement.calibration import calibration, save_thresholds
from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.judge.rubrics.card import card_status
from annotate.judge.rubrics.exchange import export_markdown, latest_calibration
from annotate.judge.rubrics.loop import mark_calibrated
from annotate.judge.rubrics.render import card_markdown
from annotate.judge.rubrics.runner import run_judge
from annotate.judge.rubrics.versions import BASELINE_MODEL, edit_rubric, get_rubric, make_current
from annotate.report.document import build_report, render_report
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import Store, open_store

pytestmark = pytest.mark.browser

IMG = '<img src="http://example.invalid/feature.png" onerror="window.__xss=1">'
SCRIPT = "<script>window.__xss=2</script>"
LINKS = "[open](javascript:window.__xss=3) ![x](http://example.invalid/name.png)"
RAW = (
    '<iframe src="http://example.invalid/frame"></iframe><svg onload="window.__xss=4"></svg>'
    '<a href="javascript:window.__xss=5">a</a><style>@import url(http://example.invalid/s.css)</style>'
)
AUTO = "<http://example.invalid/auto> <javascript:window.__xss=6>"
INSTRUCTIONS = "\n".join(
    ["# heading", IMG, SCRIPT, "", LINKS, RAW, AUTO, "[r]: http://example.invalid/ref.png", "![r]"]
)
# What each export holds from the data: the rubric's own text only in the rubric's export.
SHOWN = {
    "rubric.md": [IMG, SCRIPT, LINKS, RAW, AUTO],
    "card.md": [IMG, SCRIPT],
    "report.md": [IMG, SCRIPT],
}


def hostile_store(store: Store, folder: Path) -> tuple[Store, int, str]:
    """The rubric loop's store with a hostile feature, reviewer and rubric; a calibrated judge."""
    rows = trace_rows(60)
    for row in rows:
        row["feature"] = IMG if row["feature"] == "billing_qa" else row["feature"]
    (folder / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_traces(store, folder / "traces.jsonl")
    draw_sample(store, SampleSpec(name="loop", n=60, by=("feature",), seed=1))
    labels = [dict(r, reviewer=SCRIPT) if r["reviewer"] == "ann" else r for r in label_rows(60)]
    (folder / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labels))
    import_labels(store, folder / "labels.jsonl")
    save_thresholds(store, {"cohen_kappa": 0.0, "sensitivity": 0.0, "specificity": None}, "lena")
    definitions = [
        dict(i, definition=f"{i['definition']} {IMG} {AUTO}") for i in get_rubric(store, 1).labels
    ]
    changes = {"model": BASELINE_MODEL, "name": f"r {LINKS} {RAW}", "instructions": INSTRUCTIONS}
    version = edit_rubric(store, 1, {**changes, "labels": definitions}, "lena").version
    make_current(store, version, "lena")
    judge = run_judge(store, "loop", version).judge
    mark_calibrated(store, judge, "loop", actor="lena", repetitions=200)
    return store, version, judge


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp("markdown")
    store = open_store(folder / "hostile.duckdb")
    try:
        store, version, judge = hostile_store(store, folder)
        mark = latest_calibration(store, version)
        assert mark is not None, "the hostile rubric was not marked calibrated"
        document = build_report(
            store, calibration(store, judge, "loop", by=("feature",)), repetitions=100
        )
        yield {
            "rubric.md": export_markdown(store, version),
            "card.md": "\n".join(card_markdown(mark["card"], card_status(store, mark["card"]))),
            "report.md": render_report(document)["report.md"],
        }
    finally:
        store.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """`browser` is conftest's: Debian's chromium, skipped when it is not installed."""
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    yield opened
    context.close()


def viewed(markdown: str, path: Path) -> str:
    """The Markdown as an HTML-enabled viewer shows it: raw HTML kept, URLs linkified."""
    body = MarkdownIt("gfm-like").render(markdown)
    path.write_text(f"<!doctype html><meta charset='utf-8'><body>{body}</body>", encoding="utf-8")
    return path.as_uri()


@pytest.mark.parametrize("name", ["rubric.md", "card.md", "report.md"])
def test_a_markdown_export_of_hostile_data_loads_nothing_and_runs_nothing(
    page: Any, exports: dict[str, str], tmp_path: Path, name: str
) -> None:
    url = viewed(exports[name], tmp_path / f"{name}.html")
    requests: list[str] = []
    ran: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: ran.append(f"dialog {dialog.message}"))
    page.on("pageerror", lambda error: ran.append(str(error)))
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")

    assert requests == [url]
    assert page.evaluate("window.__xss") is None and ran == []
    assert page.locator("img, script, iframe, svg, style, object").count() == 0
    assert page.locator("a[href^='javascript'], a[href^='JAVASCRIPT']").count() == 0
    # linkify takes the `&gt;` after an autolinked URL into the link's text
    text = html.unescape(page.locator("body").inner_text())
    assert [p for p in SHOWN[name] if p not in text] == [], text[:1000]
