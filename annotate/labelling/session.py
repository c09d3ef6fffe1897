"""The labelling session: a reviewer's queue, the next claim, verdicts, Back, Skip, progress.

Blind by construction: nothing here returns the judge's verdict or another reviewer's
label for a claim the reviewer has not yet labelled. Every verdict is one append-only
event, committed before the caller can ask for the next claim, and names the claim it was
made on (trace, index, text version) and the event it was made from, so a stale tab, a
double press or a claim that was not yet on screen never becomes the current verdict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from annotate.accounts.activity import Actor, record_act
from annotate.accounts.users import is_active_account
from annotate.errors import AnnotateError
from annotate.labelling import blind
from annotate.labelling.marks import Detail, best_passages, claim_details
from annotate.store import Store
from annotate.store import assignments as sql
from annotate.store import labels as label_sql
from annotate.store.labels import active_rubric
from annotate.store.schema import ERROR_TYPES
from annotate.store.status import trace_detail

SKIP_REASONS = ("unclear_context", "not_my_expertise", "bad_extraction", "other")
# A verdict on a claim built less than this long ago is refused: a second press of a key
# (or a double click) must not label the claim that has just replaced the one it was for.
# A setting (min_dwell_seconds); this is its default.
MIN_DWELL = timedelta(seconds=0.4)
MIN_DWELL_KEY = "min_dwell_seconds"


class LabelError(AnnotateError):
    """A verdict that cannot be recorded as given; the message says why."""


class TooSoonError(LabelError):
    """The verdict came before the claim could have been read; nothing was stored."""


class StaleVerdictError(LabelError):
    """A newer verdict on this claim exists (another tab, device, or Back); nothing stored."""

    def __init__(self, newer: dict[str, Any]) -> None:
        self.newer = newer
        super().__init__(
            f"this claim already has your verdict {newer['label']!r} "
            f"(recorded {newer['created_at']:%H:%M:%S}, from another tab or device): "
            "keep it, or change it"
        )


def claim_version(text: str) -> str:
    """The identity of a claim's text: a verdict names the version it was shown."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class ClaimView:
    trace_id: str
    claim_index: int
    claim: dict[str, Any]
    trace: dict[str, Any]
    position: int
    total: int
    shown_at: datetime = field(default_factory=datetime.now)
    based_on: int | None = None  # the reviewer's latest event on this claim when shown
    final: bool = False  # labelled, and the reviewer has seen the judge on the trace (blind.py)

    @property
    def version(self) -> str:
        return claim_version(self.claim["text"])

    @property
    def key(self) -> str:
        """Names this showing of the claim: widget keys built from it never outlive it."""
        return f"{self.trace_id}|{self.claim_index}|{self.version}|{self.based_on}"

    @property
    def contexts(self) -> list[str]:
        return [item["text"] or "" for item in self.trace["contexts"]]

    @property
    def salient_terms(self) -> list[str]:
        """The claim's numbers, amounts, dates, ids and names (annotate.labelling.marks)."""
        return list(dict.fromkeys(d.text for d in self.details()))

    def details(self) -> list[Detail]:
        """Each checkable detail of the claim and where the context has it."""
        return claim_details(self.claim["text"], self.contexts)

    def passages(self, top: int = 2) -> list[tuple[int, int, int, float]]:
        """The context sentences that share the most with the claim."""
        return best_passages(self.claim["text"], self.contexts, top)


def rubric_labels(store: Store) -> tuple[int, list[dict[str, Any]]]:
    return active_rubric(store)


def unsupported_labels(store: Store) -> set[str]:
    _, labels = active_rubric(store)
    return {item["label"] for item in labels if item["binary"] == "unsupported"}


def reviewer_queue(store: Store, reviewer: str, sample: str) -> list[dict[str, Any]]:
    return sql.queue(store, reviewer, sample)


def next_claim(
    store: Store, reviewer: str, sample: str, items: list[dict[str, Any]] | None = None
) -> ClaimView | None:
    """The first claim in the reviewer's order with no verdict and no skip; None when done.

    `items` is the reviewer's queue when the caller has just read it (one read a rerun)."""
    items = sql.queue(store, reviewer, sample) if items is None else items
    for position, item in enumerate(items, start=1):
        if item["label"] is None and not item["skipped"]:
            view = claim_view(store, item["trace_id"], item["claim_index"], position, len(items))
            view.based_on = _latest_event_id(store, reviewer, view)
            return view
    return None


def _latest_event_id(store: Store, reviewer: str, view: ClaimView) -> int | None:
    latest = sql.latest_label_event(store, reviewer, view.trace_id, view.claim_index)
    return int(latest["event_id"]) if latest else None


def _based_on_latest(store: Store, reviewer: str, view: ClaimView) -> ClaimView:
    """`view` based on the reviewer's latest verdict; final (read-only) when there is one and
    they have seen the judge on the trace."""
    view.based_on = _latest_event_id(store, reviewer, view)
    view.final = view.based_on is not None and blind.is_final(store, reviewer, view.trace_id)
    return view


def claim_view(
    store: Store, trace_id: str, claim_index: int, position: int = 0, total: int = 0
) -> ClaimView:
    trace = trace_detail(store, trace_id, judge=False)  # blind: never the judge's verdict
    if trace is None:
        raise LabelError(f"no trace {trace_id!r}")
    claim = next((c for c in trace["claims"] if c["claim_index"] == claim_index), None)
    if claim is None:
        raise LabelError(f"trace {trace_id!r} has no claim {claim_index}")
    return ClaimView(trace_id, claim_index, claim, trace, position, total)


def record_verdict(
    store: Store,
    reviewer: str,
    view: ClaimView,
    label: str,
    error_type: str | None = None,
    note: str | None = None,
    min_dwell: timedelta = timedelta(0),
) -> int:
    """Append the verdict on exactly the claim of `view` and commit it; returns the event id.

    Refused (nothing stored) when the account is inactive, the claim's text changed, the
    claim was shown less than `min_dwell` ago (the page passes MIN_DWELL), or a newer verdict
    than `view.based_on` exists (StaleVerdictError, unless it is the same verdict again: then
    it is that event), or the claim is labelled and the reviewer has seen the judge on its
    trace (JudgeSeenError)."""
    return store_verdict(store, reviewer, view, label, error_type, note, min_dwell).event_id


@dataclass(frozen=True)
class Stored:
    """A verdict committed: its event, whether this call stored it (False: the same verdict
    was already the latest), and the reviewer's desk mark read before it (labels.desk_mark)."""

    event_id: int
    inserted: bool
    mark: tuple[Any, ...]


def store_verdict(
    store: Store,
    reviewer: str,
    view: ClaimView,
    label: str,
    error_type: str | None = None,
    note: str | None = None,
    min_dwell: timedelta = timedelta(0),
) -> Stored:
    """record_verdict, with what it did (Stored). Every check reads one statement
    (labels.verdict_state), inside the transaction that appends the event."""
    with store.transaction():
        state = label_sql.verdict_state(store, reviewer, view.trace_id, view.claim_index)
        _check_verdict(state, reviewer, view, label, error_type)
        if datetime.now() - view.shown_at < min_dwell:
            raise TooSoonError(
                "that key press came before the claim could be read; nothing was stored. "
                "Read the claim, then press again."
            )
        row = {
            "trace_id": view.trace_id,
            "claim_index": view.claim_index,
            "reviewer": reviewer,
            "label": label,
            "error_type": error_type or None,
            "note": (note or "").strip() or None,
            "rubric_version": state["rubric_version"],
            "shown_at": view.shown_at,
            "based_on": view.based_on,
            "claim_version": view.version,
        }
        latest = state["latest"]
        if latest is not None and state["revealed"]:  # a change, once the judge was seen
            raise blind.final_error(view.trace_id)
        if latest is not None and latest["event_id"] != view.based_on:
            if _same_verdict(latest, row):  # a repeat of the verdict just stored
                return Stored(int(latest["event_id"]), False, state["mark"])
            raise StaleVerdictError(latest)
        return Stored(sql.insert_label_event(store, row), True, state["mark"])


def _check_verdict(
    state: dict[str, Any], reviewer: str, view: ClaimView, label: str, error_type: str | None
) -> None:
    """The label is the active rubric's, an error type goes with an unsupported label, the
    account may label, the trace is in its queue and the claim is the one shown."""
    names = [item["label"] for item in state["labels"]]
    if label not in names:
        raise LabelError(f"{label!r} is not in the active rubric; use one of: {', '.join(names)}")
    unsupported = {item["label"] for item in state["labels"] if item["binary"] == "unsupported"}
    if error_type and label not in unsupported:
        raise LabelError(f"an error type goes only with an unsupported label, not {label!r}")
    if error_type and error_type not in ERROR_TYPES:
        raise LabelError(
            f"{error_type!r} is not an error type; use one of: {', '.join(ERROR_TYPES)}"
        )
    if not state["may_label"]:
        raise LabelError(f"the account {reviewer!r} is not active; nothing was stored")
    if not state["assigned"]:
        raise LabelError(f"trace {view.trace_id!r} is not in {reviewer}'s queue")
    _check_version(state["claim_text"], view)


def _same_verdict(event: dict[str, Any], row: dict[str, Any]) -> bool:
    return all(event[name] == row[name] for name in ("label", "error_type", "note"))


def _check_reviewer(store: Store, reviewer: str, view: ClaimView) -> None:
    """The account may label, the trace is in its queue, the claim is the one shown."""
    if not is_active_account(store, reviewer):
        raise LabelError(f"the account {reviewer!r} is not active; nothing was stored")
    if not sql.is_assigned(store, reviewer, view.trace_id):
        raise LabelError(f"trace {view.trace_id!r} is not in {reviewer}'s queue")
    _check_version(sql.claim_text(store, view.trace_id, view.claim_index), view)


def _check_version(text: str | None, view: ClaimView) -> None:
    if text is None or claim_version(text) != view.version:
        raise LabelError(
            f"claim {view.claim_index + 1} of trace {view.trace_id!r} is not the one shown; "
            "nothing was stored"
        )


def skip_claim(store: Store, reviewer: str, view: ClaimView, reason: str) -> bool:
    """Skip the claim of `view`; skipping it again for the same reason (a second press of S
    before the next claim is drawn) stores nothing more. True when this call stored a skip."""
    if reason not in SKIP_REASONS:
        raise LabelError(f"give a reason to skip: one of {', '.join(SKIP_REASONS)}")
    _check_reviewer(store, reviewer, view)
    with store.transaction():
        if sql.open_skip_reason(store, reviewer, view.trace_id, view.claim_index) == reason:
            return False
        sql.insert_skip(store, view.trace_id, view.claim_index, reviewer, reason)
    return True


def previous_claim(store: Store, reviewer: str, sample: str) -> ClaimView | None:
    """The claim of the reviewer's last verdict, to change it (the change is a new event)."""
    last = sql.last_label_event(store, reviewer, sample)
    if last is None:
        return None
    return _based_on_latest(
        store, reviewer, claim_view(store, last["trace_id"], last["claim_index"])
    )


RECENT = 20  # verdicts listed to reopen


def my_verdict(store: Store, reviewer: str, view: ClaimView) -> dict[str, Any] | None:
    """The reviewer's own current verdict on the claim (label, error type, note), if any."""
    return sql.latest_label_event(store, reviewer, view.trace_id, view.claim_index)


def recent_verdicts(store: Store, reviewer: str, sample: str) -> list[dict[str, Any]]:
    """The reviewer's last RECENT verdicts in the sample (their own only), newest first."""
    return sql.recent_label_events(store, reviewer, sample, RECENT)


def skipped_claims(store: Store, reviewer: str, sample: str) -> list[dict[str, Any]]:
    """Claims the reviewer skipped and has not labelled since, newest first."""
    return sql.skipped_claims(store, reviewer, sample)


def reopen_claim(store: Store, reviewer: str, trace_id: str, claim_index: int) -> ClaimView:
    """A claim of the reviewer's queue again (a skipped one, or one to change): a verdict on
    it is a new event based on their latest."""
    if not sql.is_assigned(store, reviewer, trace_id):
        raise LabelError(f"trace {trace_id!r} is not in {reviewer}'s queue")
    return _based_on_latest(store, reviewer, claim_view(store, trace_id, claim_index))


def view_after_stale(store: Store, reviewer: str, view: ClaimView) -> ClaimView:
    """The same claim again, now based on the newer verdict: a change is a new event."""
    fresh = claim_view(store, view.trace_id, view.claim_index, view.position, view.total)
    fresh.based_on = _latest_event_id(store, reviewer, view)
    fresh.shown_at = view.shown_at  # the reviewer has had this claim on screen all along
    return fresh


def progress(
    store: Store, reviewer: str, sample: str, items: list[dict[str, Any]] | None = None
) -> dict[str, int]:
    items = sql.queue(store, reviewer, sample) if items is None else items
    done = sum(1 for item in items if item["label"] is not None or item["skipped"])
    return {"done": done, "assigned": len(items), "skipped": sum(1 for i in items if i["skipped"])}


def judge_feedback(store: Store, reviewer: str, view: ClaimView) -> list[dict[str, Any]]:
    """The judge's verdicts on the claim's trace (each claim's, then the response's), only once
    this reviewer has labelled every claim of it and if a lead allows it; showing them makes
    their labels on the trace final (annotate.labelling.blind)."""
    return blind.reveal_judge(store, reviewer, view.trace_id)


def min_dwell(store: Store) -> timedelta:
    """How long a claim must have been shown before a verdict on it is taken."""
    value = sql.get_setting(store, MIN_DWELL_KEY)
    return timedelta(seconds=float(value)) if value is not None else MIN_DWELL


def set_min_dwell(store: Store, seconds: float, actor: Actor | str | None = None) -> None:
    if not 0 <= seconds <= 10:
        raise LabelError(f"the time a claim must be shown is 0 to 10 seconds, not {seconds}")
    with store.transaction():
        sql.put_setting(store, MIN_DWELL_KEY, str(float(seconds)))
        record_act(store, actor, "setting", MIN_DWELL_KEY, value=seconds)


def reveal_judge_after_submit(store: Store) -> bool:
    return blind.reveal_allowed(store)


def set_reveal_judge_after_submit(
    store: Store, reveal: bool, actor: Actor | str | None = None
) -> None:
    with store.transaction():
        sql.put_setting(store, blind.REVEAL_KEY, "true" if reveal else "false")
        record_act(store, actor, "setting", "reveal_judge_after_submit", value=reveal)
