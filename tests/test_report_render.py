"""The report renderer: hostile text stays text, the page references nothing, MD has the numbers."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import altair as alt
import pandas as pd
import pytest

from annotate.report.render import (
    Chart,
    Heading,
    Paragraph,
    Table,
    chart_svg,
    render_html,
    render_markdown,
    sanitise_svg,
)
from annotate.stats.coefficients import Stat

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"> a|b'
NAMESPACES = {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of each table cell."""

    def __init__(self, markup: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None
        self.feed(markup)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def scores() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "judge": ["alpha", "beta", "gamma", "delta", "epsilon"],
            "accuracy": [0.8123, 0.7, 0.655, 0.9, 0.5],
            "low": [0.75, 0.61, 0.58, 0.85, 0.41],
            "high": [0.8611, 0.78, 0.72, 0.94, 0.59],
        }
    )


def bars_with_rule() -> alt.LayerChart:
    base = alt.Chart(scores())
    bars = base.mark_bar().encode(x="judge:N", y="accuracy:Q")
    return bars + base.mark_rule().encode(x="judge:N", y="low:Q", y2="high:Q")


def hostile_chart() -> Chart:
    """Untrusted labels as data and title, and a link channel (vega makes it an external href)."""
    frame = pd.DataFrame({"label": [HOSTILE, "plain"], "n": [3, 4]})
    chart = alt.Chart(frame, title=HOSTILE).mark_bar().encode(x="label:N", y="n:Q", href="label:N")
    return Chart(chart.to_dict(), alt=HOSTILE)


def hostile_blocks() -> list[Any]:
    return [
        Heading(HOSTILE),
        Paragraph(HOSTILE, tone="bad"),
        Table([HOSTILE, "stat"], [[HOSTILE, {"value": None, "reason": HOSTILE}]], caption=HOSTILE),
        hostile_chart(),
    ]


def report_blocks() -> list[Any]:
    return [
        Heading("Judge accuracy"),
        Paragraph("The judge agrees with reviewers.", tone="good"),
        Table(
            ["judge", "accuracy", "claims"],
            [
                ["alpha", Stat(0.8123, 40, low=0.75, high=0.8611).as_json(), 40],
                ["beta", Stat(None, 1, reason="one category only").as_json(), 1],
                ["gamma", 0.5, None],
            ],
            caption="Accuracy with 95% intervals",
        ),
        Chart(bars_with_rule().to_dict(), alt="Accuracy per judge, with intervals"),
    ]


def test_hostile_text_is_escaped_in_every_html_block() -> None:
    page = render_html(HOSTILE, hostile_blocks())
    assert "<script" not in page.lower()
    assert "&lt;script&gt;" in page
    parsed = Tags(page)
    assert not {tag for tag, _ in parsed.tags} & {"script", "img", "iframe", "link"}
    attributes = {name for _, attrs in parsed.tags for name in attrs}
    assert not [name for name in attributes if name.startswith("on")]
    assert all("href" not in name for name in attributes)  # vega's external link is dropped


def test_hostile_text_is_escaped_in_every_markdown_block() -> None:
    markdown = render_markdown(HOSTILE, hostile_blocks())
    assert "<script" not in markdown.lower()
    assert "<img" not in markdown.lower()
    assert "&lt;script&gt;" in markdown
    assert f"*Chart: {'&lt;script&gt;'}" in markdown


def test_the_page_references_nothing_outside_itself() -> None:
    page = render_html("Report", [*report_blocks(), hostile_chart()])
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) == NAMESPACES
    assert not re.search(r"<link|<script|@import|url\(\s*['\"]?[^#'\"\s]", page, re.I)
    attributes = [(name, value) for _, attrs in Tags(page).tags for name, value in attrs.items()]
    assert not [pair for pair in attributes if pair[0] in {"src", "srcset", "action", "style"}]
    assert not [pair for pair in attributes if "href" in pair[0]]
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert page.startswith("<!doctype html>")
    assert '<meta charset="utf-8">' in page


def test_a_layered_altair_chart_is_an_inline_svg_in_a_figure() -> None:
    page = render_html("Report", report_blocks())
    figure = re.search(
        r'<figure class="chart" role="img" aria-label="([^"]*)">(.*?)</figure>', page, re.S
    )
    assert figure is not None
    assert figure.group(1) == "Accuracy per judge, with intervals"
    inner = figure.group(2)
    assert inner.startswith("<svg")
    assert "</svg><figcaption>Accuracy per judge, with intervals</figcaption>" in inner
    assert inner.count('aria-roledescription="bar"') == 5
    assert len(re.findall(r"<line\b", inner)) >= 5  # axis ticks and the 5 interval rules


def test_statistics_and_missing_values_are_formatted() -> None:
    cells = Tags(render_html("Report", report_blocks())).cells
    assert cells == [
        *("alpha", "0.812 [0.750, 0.861]", "40"),
        *("beta", "undefined: one category only", "1"),
        *("gamma", "0.500", "—"),
    ]
    assert "<caption>Accuracy with 95% intervals</caption>" in render_html("R", report_blocks())


def test_markdown_carries_the_same_numbers_as_the_html_table() -> None:
    blocks = report_blocks()
    cells = Tags(render_html("Report", blocks)).cells
    markdown = render_markdown("Report", blocks)
    table = markdown.split("**Accuracy with 95% intervals**\n\n")[1].split("\n\n")[0].splitlines()
    assert table[0] == "| judge | accuracy | claims |"
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table[2:]]
    assert [cell for row in rows for cell in row] == cells


def test_markdown_chart_is_its_caption_and_its_data() -> None:
    markdown = render_markdown("Report", report_blocks())
    assert "*Chart: Accuracy per judge, with intervals*" in markdown
    assert "| judge | accuracy | low | high |" in markdown
    assert "| alpha | 0.812 | 0.750 | 0.861 |" in markdown
    assert markdown.count("| epsilon |") == 1  # the layers share one data set
    inline = Chart({"data": {"values": [{"k": "x", "v": 1.23456}]}, "mark": "bar"}, alt="inline")
    assert "| x | 1.235 |" in render_markdown("R", [inline])


def test_a_pipe_or_newline_in_a_markdown_cell_keeps_the_table_whole() -> None:
    markdown = render_markdown("R", [Table(["a", "b"], [["x|y\nz", "# not a heading"]])])
    lines = markdown.strip().splitlines()
    assert lines[-3:] == ["| a | b |", "|---|---|", "| x\\|y z | \\# not a heading |"]
    assert len(re.split(r"(?<!\\)\|", lines[-1])) == 4


def test_markdown_text_cannot_start_a_list_or_heading() -> None:
    markdown = render_markdown("- t", [Heading("# h", 3), Paragraph("1. one"), Paragraph("*x*")])
    assert markdown.splitlines()[0] == "# \\- t"
    assert "### \\# h" in markdown
    assert "\n1\\. one\n" in markdown
    assert "\\*x\\*" in markdown


def test_sanitise_svg_drops_everything_that_runs_or_leaves_the_document() -> None:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><script href="x"/>'
        '<style>@import "http://e.com/a.css";</style><foreignObject><div>x</div></foreignObject>'
        '<g onload="alert(1)" ONCLICK=\'x\'><a xlink:href="https://e.com/">'
        '<use href="#keep"/><image href="data:image/png;base64,AA"/><image href="http://e.com/x.png"/>'
        '<rect fill="url(http://e.com/#p)" stroke="url(#grad)" aria-label="onload=x &gt; y"/>'
        '<set attributeName="href" to="javascript:alert(1)"/><animate attributeName="href"></animate>'
        "</a></g><text>onerror=fine as text</text><script>unclosed</svg>"
    )
    clean = sanitise_svg(svg)
    for gone in (
        "<script",
        "<style",
        "foreignObject",
        'onload="',
        "ONCLICK",
        "e.com",
        "javascript",
        "<set",
        "<animate",
    ):
        assert gone not in clean
    for kept in ('href="#keep"', 'href="data:image/png', 'stroke="url(#grad)"', 'fill="none"'):
        assert kept in clean
    assert "&lt;script>unclosed" in clean
    assert 'aria-label="onload=x &gt; y"' in clean
    assert "<text>onerror=fine as text</text>" in clean


def test_chart_svg_of_vl_convert_uses_fonts_by_name_only() -> None:
    svg = chart_svg(bars_with_rule().to_dict())
    assert svg.startswith("<svg")
    assert set(re.findall(r"https?://[^\s\"'<>)]+", svg)) == NAMESPACES
    assert "@font-face" not in svg
    assert set(re.findall(r'font-family="([^"]*)"', svg)) <= {"sans-serif"}


def test_blocks_refuse_what_they_cannot_render() -> None:
    with pytest.raises(ValueError, match="tone"):
        Paragraph("x", tone="<b>")
    with pytest.raises(ValueError, match="row 1"):
        Table(["a", "b"], [["only one"]])


def test_a_statistic_note_says_undefined_and_why_or_names_its_method() -> None:
    from annotate.report.render import stat_note

    assert stat_note({"value": None, "reason": "no unsupported claims in gold"}) == (
        "undefined: no unsupported claims in gold"
    )
    assert stat_note({"value": 0.5, "reason": "one group per stratum"}).startswith("no interval")
    assert stat_note({"value": 0.5, "low": 0.4, "high": 0.6, "method": "Wilson"}) == "Wilson"
