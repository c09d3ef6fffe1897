"""Blind means blind for the whole trace: the one rule for when a reviewer may see the judge,
and what their labels are worth after.

- The judge's verdicts on a trace are shown to a reviewer (if a lead allows it) only once
  they have labelled every current claim of it; a flagged or skipped claim is not labelled.
- The first showing is recorded (store/reveals.py) with the reviewer's latest label event on
  the trace. From then on their labels on that trace are final: Back and Reopen show them
  read-only, record_verdict refuses a change, and gold and agreement read only events up to
  the reveal (store/reveals.BLIND_EVENT in store/evidence.votes), so a label the judge could
  have influenced never becomes gold.
"""

from __future__ import annotations

from typing import Any

from annotate.errors import AnnotateError
from annotate.store import Store
from annotate.store import reveals as sql
from annotate.store.assignments import get_setting

REVEAL_KEY = "reveal_judge_after_submit"


class JudgeSeenError(AnnotateError):
    """A change to a label on a trace whose judge verdict the reviewer has seen."""


def reveal_allowed(store: Store) -> bool:
    return get_setting(store, REVEAL_KEY) == "true"


def is_final(store: Store, reviewer: str, trace_id: str) -> bool:
    """True once the reviewer has been shown the judge on this trace: their labels on it stay."""
    return sql.is_revealed(store, reviewer, trace_id)


def check_not_final(store: Store, reviewer: str, trace_id: str) -> None:
    """Refuse a new label event on a trace the reviewer has seen the judge on."""
    if is_final(store, reviewer, trace_id):
        raise final_error(trace_id)


def final_error(trace_id: str) -> JudgeSeenError:
    return JudgeSeenError(
        f"your verdicts on trace {trace_id!r} are final: you have seen the judge's verdict "
        "on it, so a change could follow the judge. Nothing was stored; ask a lead if a "
        "verdict is wrong."
    )


def reveal_judge(store: Store, reviewer: str, trace_id: str) -> list[dict[str, Any]]:
    """The judge's verdicts on the trace (each claim's, then the whole response's), once the
    reviewer has labelled every claim of it and if a lead allows it; the first showing is
    recorded (it makes their labels on the trace final). [] otherwise, nothing recorded."""
    if not reveal_allowed(store) or sql.unlabelled_claims(store, reviewer, trace_id) > 0:
        return []
    verdicts = sql.judge_verdicts(store, trace_id)
    if verdicts and not is_final(store, reviewer, trace_id):
        with store.transaction():
            sql.insert_reveal(store, reviewer, trace_id)
    return verdicts
