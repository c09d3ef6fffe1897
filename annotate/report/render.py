"""A report of simple blocks rendered as one offline HTML file (inline SVG charts) and as Markdown.

All text is untrusted (it may quote traces): HTML-escaped everywhere, and the page forbids loading.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from annotate.report.svg import RENDERER
from annotate.traces.markdown import inert

TONES = ("plain", "good", "bad", "note")
MISSING = "—"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STYLE = """
body{font:15px/1.5 system-ui,sans-serif;color:#1f2328;max-width:60rem;margin:2rem auto;padding:0 1rem}
h1,h2,h3,h4{line-height:1.25;margin:1.6em 0 .5em}
table{border-collapse:collapse;margin:1em 0;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding-bottom:.3em}
th,td{border:1px solid #d0d7de;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;white-space:nowrap}
p{white-space:pre-line}p.tone{border-left:4px solid;padding:.3em .8em}
p.good{border-color:#1a7f37;background:#dafbe1}p.good::before{content:"✓ "}
p.bad{border-color:#cf222e;background:#ffebe9}p.bad::before{content:"✗ "}
p.note{border-color:#9a6700;background:#fff8c5}
figure.chart{margin:1.5em 0}figure.chart svg{max-width:100%;height:auto}
figcaption{color:#59636e;font-size:.9em}
@media print{body{margin:0;max-width:none}table,figure{break-inside:avoid}h2,h3{break-after:avoid}}
""".strip()


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 2


@dataclass(frozen=True)
class Paragraph:
    text: str
    tone: str = "plain"

    def __post_init__(self) -> None:
        if self.tone not in TONES:
            raise ValueError(f"tone must be one of {', '.join(TONES)}, not {self.tone!r}")


@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""

    def __post_init__(self) -> None:
        for number, row in enumerate(self.rows, 1):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"row {number} has {len(row)} cells for {len(self.columns)} columns"
                )


@dataclass(frozen=True)
class Chart:
    spec: dict[str, Any]
    alt: str
    svg: str = ""  # rendered already (by the chart helper), else rendered from `spec`


Block = Heading | Paragraph | Table | Chart


# --- cells ---------------------------------------------------------------------------


def _number(value: Any) -> str | None:
    """Our own text for a number or None (safe as is), or None if `value` is no number."""
    if value is None or (isinstance(value, Real) and math.isnan(float(value))):
        return MISSING
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    return str(int(value)) if isinstance(value, Integral) else f"{float(value):.3f}"


def stat_note(stat: Mapping[str, Any]) -> str:
    """What a table says beside a statistic: "undefined: why", why no interval, or its method."""
    if stat.get("value") is None:
        return f"undefined: {stat.get('reason') or 'no value'}"
    if stat.get("reason"):
        return f"no interval: {stat['reason']}"
    return str(stat.get("method") or "")


def _cell(value: Any, escape: Callable[[Any], str]) -> str:
    """A cell as text: numbers to 3 decimals, a statistic as `value [low, high]` or its reason."""
    if isinstance(value, dict) and "value" in value:
        if value["value"] is None:
            reason = value.get("reason")
            return escape(f"undefined: {reason}") if reason else MISSING
        text = _number(value["value"]) or escape(str(value["value"]))
        low, high = value.get("low"), value.get("high")
        if low is not None and high is not None:
            text += f" [{_number(low) or escape(str(low))}, {_number(high) or escape(str(high))}]"
        return text
    return _number(value) or escape(str(value))


def _is_numeric(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, Real) and not isinstance(value, bool))


# --- SVG ---------------------------------------------------------------------------

_ACTIVE = r"script|style|foreignObject|iframe|set|animate\w*"
_DROP_ELEMENTS = re.compile(rf"<({_ACTIVE})\b[^>]*?(?:/>|>.*?</\1\s*>)", re.I | re.S)
_LEFT_OPEN = re.compile(rf"<(/?(?:{_ACTIVE})\b)", re.I)
_ATTR = r"""\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?"""
_TAG = re.compile(rf"<[A-Za-z][^\s/>]*(?:{_ATTR})*\s*/?>")
_ONE_ATTR = re.compile(r"""(\s+)([^\s=/>]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+))?""")
_URL = re.compile(r"url\(\s*(?!['\"]?#)[^)]*\)", re.I)


def _safe_attr(match: re.Match[str]) -> str:
    name, value = match.group(2).lower(), html.unescape((match.group(3) or "").strip("\"'"))
    if name.startswith("on"):
        return ""
    if name.endswith("href") and not value.strip().lower().startswith(("#", "data:image/")):
        return ""
    return _URL.sub("none", match.group(0))


def sanitise_svg(svg: str) -> str:
    """Drop scripts, styles, event handlers, and any reference that leaves the document."""
    svg = re.sub(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>", "", svg, flags=re.I)
    svg = _LEFT_OPEN.sub(r"&lt;\1", _DROP_ELEMENTS.sub("", svg))
    return _TAG.sub(lambda tag: _ONE_ATTR.sub(_safe_attr, tag.group(0)), svg)


def warm_up() -> None:
    """Start the chart renderer (a helper process with vl-convert's engine) without waiting.

    Its first chart costs ~0.3 s of engine start, during which vl-convert holds the GIL; a
    report that calls this before computing its numbers finds the engine ready afterwards."""
    RENDERER.start()


def chart_svg(spec: dict[str, Any]) -> str:
    """A Vega-Lite spec rendered offline by vl-convert, sanitised for inlining."""
    return _inline(RENDERER.svg(spec))


def _inline(svg: str) -> str:
    return sanitise_svg(svg).strip()


def prefetch_chart(name: str, *args: Any) -> None:
    """Start report chart `name` in the chart helper now, beside the numbers still to compute;
    `report_chart` with the same arguments takes it."""
    RENDERER.prefetch(name, args)


def report_chart(name: str, alt: str, *args: Any) -> list[Chart]:
    """Report chart `name` of `annotate.report.charts` drawn from a document's numbers, built
    and rendered by the chart helper: one block, or none when it has nothing to draw."""
    drawn = RENDERER.chart(name, args)
    return [] if drawn is None else [Chart(drawn[0], alt, drawn[1])]


# --- HTML ---------------------------------------------------------------------------


def _h(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _html_table(table: Table) -> str:
    caption = f"<caption>{_h(table.caption)}</caption>" if table.caption else ""
    head = "".join(f'<th scope="col">{_h(c)}</th>' for c in table.columns)
    body = "".join("<tr>" + "".join(map(_html_cell, row)) + "</tr>" for row in table.rows)
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_cell(value: Any) -> str:
    opening = '<td class="num">' if _is_numeric(value) else "<td>"
    return f"{opening}{_cell(value, _h)}</td>"


def _html_block(block: Block) -> str:
    if isinstance(block, Heading):
        level = min(max(block.level, 1), 6)
        return f"<h{level}>{_h(block.text)}</h{level}>"
    if isinstance(block, Paragraph):
        tone = "" if block.tone == "plain" else f' class="tone {block.tone}"'
        return f"<p{tone}>{_h(block.text)}</p>"
    if isinstance(block, Table):
        return _html_table(block)
    return (
        f'<figure class="chart" role="img" aria-label="{_h(block.alt)}">'
        f"{_inline(block.svg) if block.svg else chart_svg(block.spec)}"
        f"<figcaption>{_h(block.alt)}</figcaption></figure>"
    )


def render_html(title: str, blocks: Sequence[Block]) -> str:
    """One self-contained page: no script, no external reference, and a CSP that loads nothing."""
    body = "\n".join(_html_block(block) for block in blocks)
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_h(title)}</title>\n<style>\n{STYLE}\n</style>\n</head>\n"
        f"<body>\n<h1>{_h(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


# --- Markdown -------------------------------------------------------------------------


def _md_table(columns: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    if not columns:
        return ""
    lines = ["| " + " | ".join(inert(c) for c in columns) + " |"]
    lines.append(
        "|"
        + "|".join("---:" if _numeric_column(rows, i) else "---" for i in range(len(columns)))
        + "|"
    )
    lines += ["| " + " | ".join(_cell(v, inert) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _numeric_column(rows: Sequence[Sequence[Any]], index: int) -> bool:
    return bool(rows) and all(_is_numeric(row[index]) or row[index] is None for row in rows)


def _datasets(spec: dict[str, Any], named: dict[str, Any]) -> Iterator[tuple[str, list[Any]]]:
    """Every inline data set of a (layered or concatenated) spec, keyed so shared ones show once."""
    data: dict[str, Any] = spec.get("data") or {}
    name = str(data.get("name"))
    if isinstance(data.get("values"), list):
        yield f"inline {id(data)}", data["values"]
    elif isinstance(named.get(name), list):
        yield name, named[name]
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key) or []:
            yield from _datasets(child, named)
    if isinstance(spec.get("spec"), dict):
        yield from _datasets(spec["spec"], named)


def _md_chart(chart: Chart) -> str:
    parts = [f"*Chart: {inert(chart.alt)}*"]
    seen: set[str] = set()
    for key, values in _datasets(chart.spec, chart.spec.get("datasets") or {}):
        records = [v for v in values if isinstance(v, dict)]
        if key in seen or not records:
            continue
        seen.add(key)
        columns = list(dict.fromkeys(k for record in records for k in record))
        parts.append(_md_table(columns, [[r.get(c) for c in columns] for r in records]))
    return "\n\n".join(parts)


def _md_block(block: Block) -> str:
    if isinstance(block, Heading):
        return "#" * min(max(block.level, 1), 6) + " " + inert(block.text)
    if isinstance(block, Paragraph):
        prefix = {"plain": "", "good": "✓ ", "bad": "✗ ", "note": "> "}[block.tone]
        return prefix + inert(block.text)
    if isinstance(block, Table):
        caption = f"**{inert(block.caption)}**\n\n" if block.caption else ""
        return caption + _md_table(block.columns, block.rows)
    return _md_chart(block)


def render_markdown(title: str, blocks: Sequence[Block]) -> str:
    """The same report as Markdown; each chart is its caption plus its data as a table."""
    return "\n\n".join([f"# {inert(title)}", *(_md_block(block) for block in blocks)]) + "\n"
