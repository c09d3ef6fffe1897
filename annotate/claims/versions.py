"""A lead's new version of badly extracted claims: split one into several, merge several into
one, or correct one's text and offsets. No streamlit here; all SQL is in store/claims.py.

The old claims move to `retired_claims` with what replaced them; their labels, skips and flags
stay in the ledger under the old indexes. The new claims get indexes the trace never had, so
they are unlabelled, enter the queue of every reviewer assigned to the trace, and statistics
(which read current claims only) count them instead of the old ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.claims.extraction import ClaimsError, ClaimSpan
from annotate.store import Store
from annotate.store import claims as sql
from annotate.traces.offsets import OffsetProblem, check_offsets

ACTIONS = ("split", "merge", "correct")
REVISED_ORIGIN = "revised"


@dataclass(frozen=True)
class Revision:
    trace_id: str
    action: str
    retired: list[int]
    created: list[int]


def split_claim(
    store: Store, trace_id: str, claim_index: int, parts: Sequence[ClaimSpan], actor: Actor | str
) -> Revision:
    """Replace one claim by two or more (each a sentence of the response, or free text)."""
    if len(parts) < 2:
        raise ClaimsError("a split needs at least two parts; to change one claim, correct it")
    return revise_claims(store, trace_id, [claim_index], parts, "split", actor)


def merge_claims(
    store: Store, trace_id: str, claim_indexes: Sequence[int], merged: ClaimSpan, actor: Actor | str
) -> Revision:
    """Replace two or more claims of one trace by one."""
    if len(set(claim_indexes)) < 2:
        raise ClaimsError("a merge needs at least two claims of the same trace")
    return revise_claims(store, trace_id, claim_indexes, [merged], "merge", actor)


def correct_claim(
    store: Store, trace_id: str, claim_index: int, corrected: ClaimSpan, actor: Actor | str
) -> Revision:
    """Replace one claim's text (and offsets) by a corrected version."""
    return revise_claims(store, trace_id, [claim_index], [corrected], "correct", actor)


def revise_claims(
    store: Store,
    trace_id: str,
    claim_indexes: Sequence[int],
    new: Sequence[ClaimSpan],
    action: str,
    actor: Actor | str,
) -> Revision:
    """Retire `claim_indexes` and add `new` as the trace's next claims, in one transaction."""
    if action not in ACTIONS:
        raise ClaimsError(f"unknown action {action!r}; use one of: {', '.join(ACTIONS)}")
    old = sorted(set(claim_indexes))
    found = sql.current_claims(store, trace_id, old)
    missing = sorted(set(old) - {row["claim_index"] for row in found})
    if missing:
        raise ClaimsError(
            f"trace {trace_id!r} has no current claim {missing[0] + 1}; it may have been "
            "replaced already: reload the list of flagged claims"
        )
    spans = _checked_spans(store, trace_id, new)
    with store.transaction():
        first = sql.next_claim_index(store, trace_id)
        created = list(range(first, first + len(spans)))
        sql.retire_claims(store, trace_id, old, action, created, as_actor(actor).name)
        sql.add_claim_rows(
            store, [_row(trace_id, i, s) for i, s in zip(created, spans, strict=True)]
        )
        detail = {
            "trace_id": trace_id,
            "retired": old,
            "created": created,
            "texts": [s.text for s in spans],
        }
        record_act(store, actor, "claim_revision", trace_id, action=action, **detail)
    return Revision(trace_id, action, old, created)


def _checked_spans(store: Store, trace_id: str, new: Sequence[ClaimSpan]) -> list[ClaimSpan]:
    """Texts stripped and not empty; offsets that point at the text in the response, found when
    the text occurs there once and none were given; the same rule as imported claims."""
    spans = []
    for position, span in enumerate(new, start=1):
        text = (span.text or "").strip()
        if not text:
            raise ClaimsError(f"new claim {position} has no text; write the claim or remove it")
        spans.append(ClaimSpan(text, span.start, span.end))
    response = sql.trace_texts(store, [trace_id]).get(trace_id, (None, ""))[1]
    spans = [_located(response, s) for s in spans]
    try:
        checked, _ = check_offsets(response, spans)
    except OffsetProblem as exc:
        raise ClaimsError(f"new claim {_position(exc.field)}: {exc.message}") from None
    return checked


def _located(response: str, span: ClaimSpan) -> ClaimSpan:
    if span.start is not None or span.end is not None:
        return span
    found = response.find(span.text)
    if found >= 0 and response.find(span.text, found + 1) < 0:
        return ClaimSpan(span.text, found, found + len(span.text))
    return span  # free wording (or ambiguous): no offsets, as an LLM claim may have


def _position(field: str) -> str:
    digits = "".join(c for c in field if c.isdigit())
    return str(int(digits) + 1) if digits else field


def _row(trace_id: str, index: int, span: ClaimSpan) -> dict[str, Any]:
    return {
        "trace_id": trace_id,
        "claim_index": index,
        "text": span.text,
        "start_offset": span.start,
        "end_offset": span.end,
        "origin": REVISED_ORIGIN,
    }


def retired_versions(store: Store, trace_id: str | None = None) -> list[dict[str, Any]]:
    """Every replaced claim version (of one trace, if given), oldest first."""
    return sql.retired_claims(store, trace_id)
