"""The HTML report opened from disk in chromium: one request (itself), no errors, every chart drawn."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import pytest
from playwright.sync_api import Page

from annotate.report.render import Chart, Heading, Paragraph, Table, render_html

pytestmark = pytest.mark.browser

HOSTILE = '<script>window.__xss=1</script><img src="http://example.invalid/x.png" onerror="1">'
CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n')


def confusion_matrix() -> alt.LayerChart:
    frame = pd.DataFrame(
        {
            "human": ["supported", "supported", "unsupported", "unsupported"],
            "judge": ["supported", "unsupported", "supported", "unsupported"],
            "claims": [40, 5, 7, 28],
        }
    )
    base = alt.Chart(frame).encode(x="judge:N", y="human:N")
    return base.mark_rect().encode(color="claims:Q") + base.mark_text().encode(text="claims:Q")


def intervals() -> alt.LayerChart:
    frame = pd.DataFrame(
        {
            "metric": ["accuracy", "kappa", "alpha", "precision", "recall"],
            "value": [0.81, 0.62, 0.6, 0.77, 0.7],
            "low": [0.75, 0.52, 0.5, 0.7, 0.61],
            "high": [0.86, 0.71, 0.69, 0.83, 0.78],
        }
    )
    base = alt.Chart(frame).encode(y="metric:N")
    return base.mark_rule().encode(x="low:Q", x2="high:Q") + base.mark_point(filled=True).encode(
        x="value:Q"
    )


def trend() -> alt.Chart:
    frame = pd.DataFrame({"day": range(1, 8), "kappa": [0.5, 0.55, 0.6, 0.62, 0.7, 0.68, 0.75]})
    return alt.Chart(frame).mark_line().encode(x="day:Q", y="kappa:Q")


# Per chart: the marks vega must have drawn (selector of one mark's elements, how many).
CHARTS: list[tuple[Any, list[tuple[str, int]]]] = [
    (confusion_matrix(), [("g.mark-rect.role-mark path", 4), ("g.mark-text.role-mark text", 4)]),
    (intervals(), [("g.mark-rule.role-mark line", 5), ("g.mark-symbol.role-mark path", 5)]),
    (trend(), [("g.mark-line.role-mark path", 1)]),
]


def report(path: Path, keep_csp: bool) -> str:
    blocks: list[Any] = [Heading(HOSTILE), Paragraph(HOSTILE, tone="note")]
    blocks.append(Table(["text", "value"], [[HOSTILE, {"value": 0.8123, "low": 0.7, "high": 0.9}]]))
    blocks += [Chart(chart.to_dict(), alt=f"chart {n}") for n, (chart, _) in enumerate(CHARTS)]
    page = render_html(HOSTILE, blocks)
    path.write_text(page if keep_csp else CSP_META.sub("", page, count=1), encoding="utf-8")
    return path.as_uri()


@pytest.fixture
def page(browser: Any) -> Iterator[Page]:
    """`browser` is conftest's: Debian's chromium, skipped when it is not installed."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    yield opened
    context.close()


@pytest.mark.parametrize("keep_csp", [True, False], ids=["with-csp", "csp-removed"])
def test_report_loads_nothing_but_itself_and_draws_every_chart(
    page: Page, tmp_path: Path, keep_csp: bool
) -> None:
    """Without its CSP too, so the CSP cannot hide a request the page would otherwise make."""
    url = report(tmp_path / "report.html", keep_csp)
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.on(
        "console", lambda m: problems.append(m.text) if m.type in {"error", "warning"} else None
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("dialog", lambda dialog: problems.append(f"dialog {dialog.message}"))

    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")

    assert requests == [url]
    assert problems == []
    assert page.evaluate("window.__xss") is None
    assert page.locator("h1").inner_text() == HOSTILE
    assert page.locator("td").first.inner_text() == HOSTILE
    svgs = page.locator("figure.chart > svg")
    assert svgs.count() == page.locator("figure.chart").count() == len(CHARTS)
    for index, (_, marks) in enumerate(CHARTS):
        svg = svgs.nth(index)
        box = svg.bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 50, (index, box)
        assert svg.locator("path, rect, line").count() > 0
        for selector, expected in marks:
            drawn = svg.locator(selector)
            assert drawn.count() == expected, (index, selector)
            mark_box = drawn.first.bounding_box()
            assert mark_box is not None and mark_box["width"] + mark_box["height"] > 0
    counts = svgs.nth(0).locator("g.mark-text.role-mark text").all_text_contents()
    assert sorted(counts) == ["28", "40", "5", "7"]


@pytest.fixture(scope="module")
def written_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`annotate report` on the bundled sample store, as a user would run it."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("report")
    annotate = str(Path(sys.executable).with_name("annotate"))
    db = str(folder / "annotate.duckdb")
    for args in (
        ["init"],
        ["report", "--judge", "prod-judge-v3", "--sample", "demo", "--by", "risk_category",
         "--out", str(folder / "out")],
    ):  # fmt: skip
        done = subprocess.run(
            [annotate, *args, "--db", db], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
    return folder / "out"


def test_the_written_calibration_report_opens_offline_with_every_chart_drawn(
    page: Page, written_report: Path
) -> None:
    import json

    document = json.loads((written_report / "report.json").read_text(encoding="utf-8"))
    charts = (
        1
        + bool(document["agreement"]["over_time"])
        + any(not s.get("reason") for s in document["calibration"]["slices"])
    )
    url = (written_report / "report.html").as_uri()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    assert requests == [url]
    svgs = page.locator("figure.chart > svg")
    assert svgs.count() == charts >= 2
    for index in range(charts):
        box = svgs.nth(index).bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 50
        assert svgs.nth(index).locator("g.role-mark path, g.role-mark line").count() > 0
    confusion = document["calibration"]["confusion"]
    drawn = svgs.nth(0).locator("g.mark-text.role-mark text").all_text_contents()
    assert sorted(drawn) == sorted(str(confusion[k]) for k in ("tp", "fp", "fn", "tn"))
