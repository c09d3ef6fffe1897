"""SQL for judge reveals: when a reviewer was shown the judge's verdict on a trace, and the
last of their label events on it that a statistic may use (the rule: annotate.labelling.blind)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from annotate.store import Store

# A label event counts for gold and agreement unless its reviewer had seen the judge on its
# trace before it was stored (an event after `last_event` of a reveal). `{a}` is the alias of
# label_events in the query.
BLIND_EVENT = (
    "NOT EXISTS (SELECT 1 FROM judge_reveals r WHERE r.reviewer = {a}.reviewer "
    "AND r.trace_id = {a}.trace_id AND {a}.event_id > r.last_event)"
)


def is_revealed(store: Store, reviewer: str, trace_id: str) -> bool:
    return bool(
        store.scalar(
            "SELECT count(*) FROM judge_reveals WHERE reviewer = ? AND trace_id = ?",
            [reviewer, trace_id],
        )
    )


def insert_reveal(store: Store, reviewer: str, trace_id: str) -> None:
    """Record the reveal once, with the reviewer's latest label event on the trace."""
    store.execute(
        "INSERT INTO judge_reveals SELECT ?, ?, ?, (SELECT coalesce(max(event_id), 0) "
        "FROM label_events WHERE reviewer = ? AND trace_id = ?) "
        "WHERE NOT EXISTS (SELECT 1 FROM judge_reveals WHERE reviewer = ? AND trace_id = ?)",
        [reviewer, trace_id, datetime.now(), reviewer, trace_id, reviewer, trace_id],
    )


def unlabelled_claims(store: Store, reviewer: str, trace_id: str) -> int:
    """The trace's current claims this reviewer has not labelled (a flag or a skip is no label)."""
    return int(
        store.scalar(
            "SELECT count(*) FROM claims c WHERE c.trace_id = ? AND NOT EXISTS (SELECT 1 FROM "
            "label_events e WHERE e.reviewer = ? AND e.trace_id = c.trace_id "
            "AND e.claim_index = c.claim_index)",
            [trace_id, reviewer],
        )
    )


def judge_verdicts(store: Store, trace_id: str) -> list[dict[str, Any]]:
    """The judge's verdicts on the trace: each claim's, then the whole response's."""
    return store.fetch_dicts(
        "SELECT judge, level, claim_index, label, score, explanation FROM judge_verdicts "
        "WHERE trace_id = ? AND (level = 'response' OR claim_index IN "
        "(SELECT claim_index FROM claims WHERE trace_id = ?)) "
        "ORDER BY level, claim_index NULLS LAST, judge",
        [trace_id, trace_id],
    )
