"""How a claim and its trace are shown (Label, Adjudicate, Questions) and one statistic's table
row (Agreement, Calibration): untrusted text escaped character by character, the passages the
claim cites tinted, the figures it states marked where the context lacks them."""

from __future__ import annotations

import html

import streamlit as st

from annotate.errors import counted
from annotate.report.render import stat_note


def _layered(
    text: str, passages: list[tuple[int, int]], marks: list[tuple[int, int]], mark: str = "<mark>"
) -> str:
    """Escape every character of untrusted text; the passages get a tinted background, the
    marks a <mark> (both may overlap: each piece of text is wrapped in what covers it)."""
    cuts = sorted({0, len(text), *[p for span in passages + marks for p in span]})
    out = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        piece = html.escape(text[start:end])
        if any(a <= start and end <= b for a, b in marks):
            piece = f"{mark}{piece}</mark>"
        if any(a <= start and end <= b for a, b in passages):
            piece = f'<span class="annotate-passage" style="{_PASSAGE}">{piece}</span>'
        out.append(piece)
    return "".join(out)


_BOX = "white-space: pre-wrap; font-family: ui-monospace, monospace; font-size: 0.9rem; padding: 0.5rem; border: 1px solid rgba(128,128,128,0.3); border-radius: 0.3rem;"
_CAPTION = "font-size: 0.875rem; opacity: 0.6; margin-bottom: 0.25rem;"
_PANE = "overflow-y: auto; padding: 0 1rem 1rem 1rem; border: 1px solid rgba(128,128,128,0.2); border-radius: 0.5rem;"
_PASSAGE = "background: rgba(0,120,255,0.13); border-bottom: 2px solid rgba(0,120,255,0.5);"
_MISSING_MARK = '<mark class="annotate-missing" style="background: rgba(230,40,40,0.3)">'
LABEL_CONTEXT_HEIGHT = 640  # px: the Label page's context pane; with the header it fits 1000 px
_FOUND = "{} ({}) in the context"
_MISSING = (
    '<b class="annotate-detail-missing" style="background: rgba(255,43,43,0.1); '
    'color: rgb(189,65,65);">{} ({}) not in the context</b>'
)
_DETAILS = "font-size: 0.875rem; margin-top: 0.5rem;"
_KINDS = {"date": "date", "amount": "amount", "number": "number", "id": "id", "name": "name"}


def _claim_span(view) -> list[tuple[int, int]]:
    response, claim = view.trace["response"] or "", view.claim
    start, end = claim.get("start_offset"), claim.get("end_offset")
    if start is None or end is None or response[start:end] != claim["text"]:
        found = response.find(claim["text"])
        start, end = (found, found + len(claim["text"])) if found >= 0 else (None, None)
    return [(start, end)] if start is not None and end is not None else []


def show_claim_box(view, above: str = "") -> list:  # view: annotate.labelling.session.ClaimView
    """The claim under its trace line, and a line of its numbers, dates, amounts and names
    saying whether the context has each: one it lacks stands out. Returns the details (for
    the context). `above`: HTML drawn in the same element (the Label page's progress). The
    trace line, the claim and its details are one element: a claim drawn is one delta (the
    progress bar and a Markdown line beside it cost chromium 4-7 ms a press: docs/benchmarks.md)."""
    details = view.details()
    st.html(above + claim_box_html(view, details))
    return details


def progress_html(done: int, total: int, text: str) -> str:
    """A progress line and its bar (`text` is escaped here)."""
    return (
        f'<div class="annotate-progress" style="font-size: 0.875rem;">{html.escape(text)}</div>'
        f'<progress value="{int(done)}" max="{max(int(total), 1)}" '
        f'style="width: 100%; height: 0.5rem; margin-bottom: 0.5rem;"></progress>'
    )


def details_html(details: list) -> str:
    """The claim's numbers, dates, amounts and names, each said found or not in the context;
    one the context lacks stands out. Every value is escaped."""
    pieces = [
        (_FOUND if d.in_context else _MISSING).format(html.escape(d.text), _KINDS[d.kind])
        for d in details
    ]
    return f'<div class="annotate-details" style="{_DETAILS}">{" · ".join(pieces)}</div>'


def claim_box_html(view, details: list) -> str:
    """The trace line and the claim, its details missing from the context marked, and the
    line of its details."""
    trace, claim = view.trace, view.claim
    heading = (
        f"Trace {trace['trace_id']} · {trace.get('feature') or ''} · claim {view.claim_index + 1}"
    )
    marks = [(d.start, d.end) for d in details if not d.in_context]
    # which claim this is, for a page that must tell two claims of the same text apart
    claim_key = f"{trace['trace_id']}#{view.claim_index}"
    return (
        f'<div class="annotate-claim-head" style="{_CAPTION}">{html.escape(heading)}</div>'
        f'<div class="annotate-claim" data-claim="{html.escape(claim_key)}" '
        f'style="{_BOX} background: rgba(255,220,0,0.15)">'
        f"{_layered(claim['text'], [], marks, _MISSING_MARK)}</div>"
        + (details_html(details) if details else "")
    )


def show_context(view, details: list | None = None, height: int | None = None) -> None:
    """Request, response with the claim marked, and each context item with the claim's
    details marked and the passages sharing most with the claim tinted, as one element (the
    browser draws one piece, not one per item), scrolling on its own within `height` px if
    given. All text is HTML-escaped: it shows literally, nothing runs."""
    st.html(context_pane_html(view, view.details() if details is None else details, height))


def context_pane_html(view, details: list, height: int | None = None) -> str:
    body = context_html(view, details)
    if height is None:
        return body
    return (
        f'<div class="annotate-context-pane" style="{_PANE} height: {int(height)}px;">{body}</div>'
    )


def context_html(view, details: list) -> str:
    trace, passages = view.trace, view.passages()
    items = counted(len(trace["contexts"]), "item")
    parts = [
        _heading("Request"),
        f'<div class="annotate-request" style="{_BOX}">{html.escape(trace.get("request") or "(none)")}</div>',
        _heading("Response"),
        f'<div class="annotate-response" style="{_BOX}">'
        f"{_layered(trace['response'] or '', [], _claim_span(view))}</div>",
        _heading(
            "Context",
            f" ({items})"
            + (" · tinted: the passages sharing most with the claim" if passages else ""),
        ),
    ]
    for number, item in enumerate(trace["contexts"]):
        marks = [(s, e) for d in details for i, s, e in d.found if i == number]
        tinted = [(s, e) for i, s, e, _ in passages if i == number]
        parts.append(
            f'<div class="annotate-context" style="{_BOX} margin-bottom: 0.5rem;">'
            f"<b>{html.escape(item['source'] or 'context ' + str(item['position'] + 1))}</b>\n"
            f"{_layered(item['text'] or '', tinted, marks)}</div>"
        )
    return "".join(parts)


def _heading(name: str, rest: str = "") -> str:
    return f'<p style="margin: 0.75rem 0 0.25rem 0;"><b>{name}</b>{html.escape(rest)}</p>'


def show_claim(view) -> None:  # view: annotate.labelling.session.ClaimView
    """The claim with its details, then its request, response and context."""
    show_context(view, show_claim_box(view))


def stat_row(name: str, stat: dict) -> dict:
    """One statistic ({"value", "low", "high", "units"} or a reason) as a table row."""
    return {
        "statistic": name,
        "value": stat.get("value"),
        "low": stat.get("low"),
        "high": stat.get("high"),
        "units": stat.get("units"),
        "note": stat_note(stat),
    }
