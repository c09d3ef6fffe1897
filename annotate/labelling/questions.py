"""Questions to the leads: a reviewer asks about one claim of their queue, a lead answers.

A reviewer reads only their own questions and the answers to them: nothing here returns
another reviewer's label, note or question, or the judge's verdict.
"""

from __future__ import annotations

from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.accounts.users import is_active_account
from annotate.errors import AnnotateError
from annotate.store import Store
from annotate.store import assignments as assignment_sql
from annotate.store import questions as sql
from annotate.store import users as user_sql
from annotate.traces.limits import check_text

MAX_QUESTION_CHARS = 4_000
# What a reviewer may read of their own questions: no label, note or judge is among them.
REVIEWER_FIELDS = ("id", "trace_id", "claim_index", "claim", "question", "asked_at", "answer")


class QuestionError(AnnotateError):
    """A question or answer that cannot be stored as given; the message says what to do."""


def _text(value: str | None, what: str) -> str:
    text = (value or "").strip()
    if not text:
        raise QuestionError(f"the {what} is empty: write it, then send it")
    if len(text) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the {what} is {len(text):,} characters long; keep it under "
            f"{MAX_QUESTION_CHARS:,} (link to a document if you need more)"
        )
    try:
        return check_text(text)
    except ValueError as exc:
        raise QuestionError(f"the {what} {exc}") from None


def ask_question(
    store: Store,
    reviewer: str,
    trace_id: str,
    claim_index: int,
    text: str,
    sample: str | None = None,
) -> int:
    """Store a reviewer's question about a claim of their queue; returns its id."""
    body = _text(text, "question")
    if not is_active_account(store, reviewer):
        raise QuestionError(f"the account {reviewer!r} is not active; nothing was stored")
    if not assignment_sql.is_assigned(store, reviewer, trace_id):
        raise QuestionError(f"trace {trace_id!r} is not in {reviewer}'s queue; nothing was stored")
    if assignment_sql.claim_text(store, trace_id, claim_index) is None:
        raise QuestionError(f"trace {trace_id!r} has no claim {claim_index + 1}")
    with store.transaction():
        number = sql.insert_question(store, trace_id, claim_index, sample, reviewer, body)
        record_act(store, reviewer, "question", f"{trace_id}#{claim_index + 1}", question=number)
    return number


def answer_question(store: Store, question_id: int, text: str, lead: Actor | str) -> None:
    """A lead answers (or answers again: the latest answer is the one shown)."""
    body = _text(text, "answer")
    actor = as_actor(lead)
    row = user_sql.user_row(store, actor.name)
    if not row or row["role"] != "lead" or not row["active"]:
        raise QuestionError(f"only an active lead answers questions, not {actor.name!r}")
    asked = sql.question(store, question_id)
    if asked is None:
        raise QuestionError(f"there is no question {question_id}")
    with store.transaction():
        sql.insert_answer(store, question_id, body, actor.name)
        record_act(store, actor, "answer", f"question {question_id}", reviewer=asked["reviewer"])


def open_questions(store: Store) -> list[dict[str, Any]]:
    """Every unanswered question, oldest first, with the claim's text (for leads)."""
    return sql.questions(store, open_only=True)


def all_questions(store: Store) -> list[dict[str, Any]]:
    return sql.questions(store)


def my_questions(
    store: Store, reviewer: str, trace_id: str | None = None, claim_index: int | None = None
) -> list[dict[str, Any]]:
    """The reviewer's own questions (on one claim, if given) with the answers, newest first."""
    rows = [
        {name: row[name] for name in REVIEWER_FIELDS}
        for row in sql.questions(store, reviewer=reviewer)
        if trace_id is None or (row["trace_id"], row["claim_index"]) == (trace_id, claim_index)
    ]
    return rows[::-1]
