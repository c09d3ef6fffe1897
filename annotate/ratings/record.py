"""A reviewer's ratings of one response: checked against the rubric's criteria, appended as
events (never updated), refused once the reviewer has seen the judge on the trace; and the
criteria a rating is asked on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from annotate.accounts.activity import Actor, as_actor
from annotate.accounts.users import is_active_account
from annotate.errors import UsageError
from annotate.labelling.blind import check_not_final
from annotate.rubrics.criteria import criteria_of, find_criterion, scale_of
from annotate.rubrics.versions import Rubric, get_rubric
from annotate.store import Store
from annotate.store import assignments as assignments_sql
from annotate.store import ratings as sql


class RatingError(UsageError):
    """A rating cannot be stored as asked; nothing was stored and the message says why."""


def current_criteria(store: Store) -> tuple[Rubric, list[dict[str, Any]]]:
    """The current rubric version and the criteria its reviewers rate."""
    rubric = get_rubric(store)
    return rubric, criteria_of(rubric)


def check_score(criterion: Mapping[str, Any], score: Any) -> int | None:
    """A whole score on the criterion's scale; None (skipped) only for an optional one."""
    low, high = scale_of(criterion)
    name = criterion["name"]
    if score is None:
        if not criterion.get("optional"):
            raise RatingError(f"{name} is not optional: give a score from {low} to {high}")
        return None
    if type(score) is not int or not low <= score <= high:
        raise RatingError(f"{name} must be a whole score from {low} to {high}, got {score!r}")
    return score


def record_ratings(
    store: Store,
    actor: Actor | str,
    trace_id: str,
    scores: Mapping[str, int | None],
) -> None:
    """Append one event per criterion rated (None: skipped); all or nothing."""
    who = as_actor(actor)
    rubric, criteria = current_criteria(store)
    rows = []
    for name, score in scores.items():
        checked = check_score(find_criterion(criteria, name), score)
        rows.append(_event(trace_id, name, who.name, checked, rubric.version))
    if not is_active_account(store, who.name):
        raise RatingError(f"the account {who.name!r} is not active; nothing was stored")
    if not assignments_sql.is_assigned(store, who.name, trace_id):
        raise RatingError(f"trace {trace_id!r} is not in {who.name}'s queue; nothing was stored")
    check_not_final(store, who.name, trace_id)
    with store.transaction():
        sql.insert_rating_events(store, rows)


def _event(trace_id: str, criterion: str, reviewer: str, score: int | None, version: int) -> dict:
    return {
        "trace_id": trace_id,
        "criterion": criterion,
        "reviewer": reviewer,
        "score": score,
        "rubric_version": version,
        "origin": "app",
    }


def my_ratings(store: Store, reviewer: str, trace_id: str) -> dict[str, int | None]:
    """The reviewer's own latest ratings on the trace (never a peer's or the judge's)."""
    return sql.own_ratings(store, trace_id, reviewer)


def missing_criteria(
    criteria: Sequence[Mapping[str, Any]], given: Mapping[str, int | None]
) -> list[str]:
    """Criteria the reviewer has neither rated nor skipped on this trace."""
    return [c["name"] for c in criteria if c["name"] not in given]


def import_rating_rows(store: Store, rows: Sequence[dict[str, Any]], import_id: int) -> None:
    """Reviewers' ratings from an import: {trace_id, reviewer, criterion, score}."""
    version = get_rubric(store).version
    events = [
        {
            **_event(r["trace_id"], r["criterion"], r["reviewer"], r["score"], version),
            "origin": "import",
            "import_id": import_id,
        }
        for r in rows
    ]
    sql.insert_rating_events(store, events)
