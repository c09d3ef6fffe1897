"""A reviewer's ratings of one response: checked against the rubric's criteria, appended as
events (never updated), refused once the reviewer has seen the judge on the trace; and the
criteria a rating is asked on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.accounts.users import is_active_account
from annotate.errors import UsageError
from annotate.labelling.blind import check_not_final, is_final
from annotate.ratings.criteria import criteria_extra, find_criterion, scale_of
from annotate.store import Store
from annotate.store import assignments as assignments_sql
from annotate.store import ratings as sql
from annotate.store import reveals as reveals_sql
from annotate.store import rubrics as rubrics_sql

ASK_KEY = "ask_ratings"


class RatingError(UsageError):
    """A rating cannot be stored as asked; nothing was stored and the message says why."""


def current_criteria(store: Store) -> tuple[int, list[dict[str, Any]]]:
    """The current rubric version and the criteria its reviewers rate (read from the store:
    rubrics/ sits above this package)."""
    version = rubrics_sql.current_version(store)
    row = rubrics_sql.rubric_row(store, version)
    return version, criteria_extra(row["spec"] if row else {}).get("criteria", [])


def criterion_scale(store: Store, criterion: str) -> tuple[int, int] | None:
    """(lowest, highest) score of `criterion` in the newest rubric version defining it (the
    same in a bundle's tables as in the store it came from); None if no version does."""
    for row in reversed(rubrics_sql.rubric_rows(store)):
        for item in criteria_extra(row["spec"] or {}).get("criteria", []):
            if item["name"] == criterion:
                return scale_of(item)
    return None


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
    version, criteria = current_criteria(store)
    rows = []
    for name, score in scores.items():
        checked = check_score(find_criterion(criteria, name), score)
        rows.append(_event(trace_id, name, who.name, checked, version))
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


def asks_ratings(store: Store) -> bool:
    """Whether the Label page asks reviewers to rate each response after its claims (a lead's
    setting, off by default: turning it on adds a step to every trace of every queue)."""
    return assignments_sql.get_setting(store, ASK_KEY) == "true"


def set_asks_ratings(store: Store, ask: bool, actor: Actor | str | None = None) -> None:
    with store.transaction():
        assignments_sql.put_setting(store, ASK_KEY, "true" if ask else "false")
        record_act(store, actor, "setting", ASK_KEY, value=ask)


def ratings_due(store: Store, reviewer: str, trace_id: str) -> list[dict[str, Any]]:
    """The criteria the reviewer is to rate on this trace now: once every claim of it is
    labelled, before they may see the judge (never after: blind.py), if a lead asks for
    ratings; in the rubric's order. [] otherwise."""
    if not asks_ratings(store) or reveals_sql.unlabelled_claims(store, reviewer, trace_id):
        return []
    if is_final(store, reviewer, trace_id) or not assignments_sql.is_assigned(
        store, reviewer, trace_id
    ):
        return []
    _, criteria = current_criteria(store)
    given = my_ratings(store, reviewer, trace_id)
    return [c for c in criteria if c["name"] not in given]
