"""SQL for reviewers' questions to the leads and the leads' answers. Both are appended, never
changed: a new answer is a new row, and the current answer is the latest one."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from annotate.store import Store

_LATEST_ANSWER = (
    "LEFT JOIN (SELECT question_id, arg_max(answer, id) AS answer, "
    "  arg_max(answered_by, id) AS answered_by, max(answered_at) AS answered_at "
    "  FROM question_answers GROUP BY question_id) a ON a.question_id = q.id "
)


def insert_question(
    store: Store, trace_id: str, claim_index: int, sample: str | None, reviewer: str, text: str
) -> int:
    return int(
        store.scalar(
            "INSERT INTO questions (trace_id, claim_index, sample, reviewer, question, asked_at) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            [trace_id, claim_index, sample, reviewer, text, datetime.now()],
        )
    )


def insert_answer(store: Store, question_id: int, answer: str, by: str) -> None:
    store.execute(
        "INSERT INTO question_answers (question_id, answer, answered_by, answered_at) "
        "VALUES (?, ?, ?, ?)",
        [question_id, answer, by, datetime.now()],
    )


def question(store: Store, question_id: int) -> dict[str, Any] | None:
    rows = store.fetch_dicts(
        "SELECT q.*, a.answer, a.answered_by, a.answered_at FROM questions q "
        + _LATEST_ANSWER
        + "WHERE q.id = ?",
        [question_id],
    )
    return rows[0] if rows else None


def questions(
    store: Store, reviewer: str | None = None, open_only: bool = False
) -> list[dict[str, Any]]:
    """Questions with the claim's text and their latest answer; one reviewer's if named."""
    where, params = [], []
    if reviewer is not None:
        where.append("q.reviewer = ?")
        params.append(reviewer)
    if open_only:
        where.append("a.answer IS NULL")
    return store.fetch_dicts(
        "SELECT q.id, q.trace_id, q.claim_index, q.sample, q.reviewer, q.question, q.asked_at, "
        "  c.text AS claim, a.answer, a.answered_by, a.answered_at "
        "FROM questions q LEFT JOIN claims c USING (trace_id, claim_index) "
        + _LATEST_ANSWER
        + (f"WHERE {' AND '.join(where)} " if where else "")
        + "ORDER BY q.asked_at, q.id",
        params,
    )
