"""Claims of sampled traces: provided by the trace, split by sentence offline, or extracted by an LLM.

A trace's claims are created once and never overwritten; each records its origin.
The sentence splitter keeps character offsets into the response:
response[start:end] == text for every claim it makes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from annotate.errors import AnnotateError, UsageError
from annotate.samples import sample_trace_ids
from annotate.store import Store
from annotate.store import claims as sql

EXTRACTORS = ("auto", "provided", "sentences", "llm")
FLAG_REASONS = ("not_atomic", "not_in_response", "not_a_claim", "other")
ABBREVIATIONS = {
    "e.g",
    "i.e",
    "etc",
    "vs",
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "inc",
    "ltd",
    "co",
    "corp",
    "no",
    "st",
    "jr",
    "sr",
    "approx",
    "dept",
    "fig",
    "u.s",
    "u.k",
    "a.m",
    "p.m",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "cf",
    "al",
}
# a sentence ends at . ! ? (plus closing quotes/brackets) before whitespace, or at a line break
_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n+")
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


class ClaimsError(AnnotateError):
    """Claims cannot be created as asked; the message says what to do."""


@dataclass(frozen=True)
class ClaimSpan:
    text: str
    start: int | None
    end: int | None


@dataclass
class ClaimReport:
    traces: int = 0
    created: int = 0
    already_had: int = 0
    failed: int = 0
    extractor: str = ""
    errors: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "created": self.created,
            "already_had": self.already_had,
            "failed": self.failed,
            "extractor": self.extractor,
            "errors": self.errors,
        }


def split_sentences(text: str) -> list[ClaimSpan]:
    """Sentences with offsets. Code blocks (``` fences) are skipped: they are not claims to
    check against documents. List items and lines are their own sentences."""
    spans: list[ClaimSpan] = []
    cursor = 0
    for fence in _FENCE.finditer(text):
        spans += _split_prose(text, cursor, fence.start())
        cursor = fence.end()
    return spans + _split_prose(text, cursor, len(text))


def _split_prose(text: str, begin: int, stop: int) -> list[ClaimSpan]:
    spans, start = [], begin
    for match in _END.finditer(text, begin, stop):
        end = match.end() if not match.group().startswith("\n") else match.start()
        if match.group().startswith(".") and _is_abbreviation(text, start, match.start()):
            continue
        if match.group().startswith(".") and _is_number_dot(text, match.start()):
            continue
        spans += _span(text, start, end)
        start = match.end()
    return spans + _span(text, start, stop)


def _is_abbreviation(text: str, start: int, dot: int) -> bool:
    word = re.search(r"([A-Za-z](?:\.?[A-Za-z])*)$", text[start:dot])
    if word is None:
        return False
    return word.group(1).lower() in ABBREVIATIONS or len(word.group(1)) == 1


def _is_number_dot(text: str, dot: int) -> bool:
    """`1.` at the start of a line is a list marker, not the end of a sentence."""
    line_start = text.rfind("\n", 0, dot) + 1
    return bool(re.fullmatch(r"\s*\d+", text[line_start:dot]))


def _span(text: str, start: int, end: int) -> list[ClaimSpan]:
    piece = text[start:end]
    bullet = _BULLET.match(piece)
    if bullet:
        start += bullet.end()
        piece = text[start:end]
    stripped = piece.strip()
    if not stripped or not any(c.isalnum() for c in stripped):
        return []
    first = start + piece.index(stripped)
    return [ClaimSpan(stripped, first, first + len(stripped))]


def has_llm_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY"))


def create_claims(
    store: Store,
    sample: str,
    extractor: str = "auto",
    client: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> ClaimReport:
    """Give every trace of the sample its claims, once; traces that have claims keep them."""
    if extractor not in EXTRACTORS:
        raise UsageError(f"unknown extractor {extractor!r}; use one of: {', '.join(EXTRACTORS)}")
    trace_ids = sample_trace_ids(store, sample)
    if not trace_ids:
        raise UsageError(
            f"no sample named {sample!r} with traces; draw one first (annotate sample)"
        )
    chosen = (
        ("llm" if has_llm_key() or client is not None else "sentences")
        if extractor == "auto"
        else extractor
    )
    if chosen == "llm" and client is None:
        from annotate.llm import make_client

        client = make_client()
    report = ClaimReport(traces=len(trace_ids), extractor=chosen)
    counts = sql.claim_counts(store, trace_ids)
    for done, trace_id in enumerate(trace_ids, start=1):
        if counts.get(trace_id, 0):
            report.already_had += 1
        elif chosen != "provided":
            _create_for(store, trace_id, chosen, client, report)
        if progress:
            progress(done, len(trace_ids))
    return report


def _create_for(
    store: Store, trace_id: str, extractor: str, client: Any, report: ClaimReport
) -> None:
    response = sql.response_text(store, trace_id)
    if extractor == "sentences":
        spans = split_sentences(response)
    else:
        from annotate.llm import ExtractionError, extract_claims

        try:
            spans = extract_claims(store, client, trace_id, response)
        except ExtractionError as exc:
            report.failed += 1
            report.errors.append({"trace_id": trace_id, "message": str(exc)})
            return
    with store.transaction():
        sql.insert_claims(store, trace_id, [(s.text, s.start, s.end) for s in spans], extractor)
    report.created += len(spans)


def claims_for_trace(store: Store, trace_id: str) -> list[dict[str, Any]]:
    return sql.trace_claims(store, trace_id)


def flag_claim(
    store: Store,
    trace_id: str,
    claim_index: int,
    reviewer: str,
    reason: str,
    note: str | None = None,
) -> None:
    """A reviewer marks a claim as badly extracted; the lead sees the flags."""
    if reason not in FLAG_REASONS:
        raise ClaimsError(f"flag reason must be one of: {', '.join(FLAG_REASONS)}")
    sql.insert_flag(store, trace_id, claim_index, reviewer, reason, (note or "").strip() or None)


def claim_flags(store: Store, sample: str | None = None) -> list[dict[str, Any]]:
    return sql.flags(store, sample)
