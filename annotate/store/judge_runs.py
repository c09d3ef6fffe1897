"""SQL for our own judge's runs: runs, their verdicts (in judge_verdicts, origin 'run'), failed
calls and the claims of a Message Batch. A (judge, claim) verdict is written once.

A run 'running' in the file but not in this process (`_LIVE`) was stopped by its process
dying: only one process writes the file, so `interrupt_dead_runs` marks it 'interrupted'
with what it stored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from annotate.store import Store, id_batch

# (store path, run id) of the runs this process is running: no other process can run one
_LIVE: set[tuple[str, int]] = set()


def _where(store: Store) -> str:
    return store.path if store.path == ":memory:" else os.path.realpath(store.path)


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def judge_material(store: Store, trace_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """trace -> request, response, feature, its claims {index: text} and its context texts."""
    if not trace_ids:
        return {}
    ids = id_batch(trace_ids)
    found: dict[str, dict[str, Any]] = {}
    for trace_id, request, response, feature in store.fetch_with_batch(
        "SELECT t.trace_id, t.request, t.response, t.feature FROM traces t JOIN _batch USING (trace_id)",
        ids,
    ):
        found[trace_id] = {
            "request": request,
            "response": response or "",
            "feature": feature,
            "claims": {},
            "context": [],
        }
    for trace_id, index, text in store.fetch_with_batch(
        "SELECT c.trace_id, c.claim_index, c.text FROM claims c JOIN _batch USING (trace_id) "
        "ORDER BY c.trace_id, c.claim_index",
        ids,
    ):
        found[trace_id]["claims"][int(index)] = text
    for trace_id, source, text in store.fetch_with_batch(
        "SELECT x.trace_id, x.source, x.text FROM contexts x JOIN _batch USING (trace_id) "
        "ORDER BY x.trace_id, x.position",
        ids,
    ):
        found[trace_id]["context"].append({"source": source, "text": text})
    return found


def sample_claims(store: Store, sample: str, labelled_only: bool) -> list[tuple[str, int]]:
    labelled = (
        "JOIN (SELECT DISTINCT trace_id, claim_index FROM label_events) e "
        "USING (trace_id, claim_index) "
        if labelled_only
        else ""
    )
    rows = store.fetchall(
        "SELECT DISTINCT c.trace_id, c.claim_index FROM claims c "
        "JOIN (SELECT DISTINCT trace_id FROM sample_units WHERE sample = ?) s USING (trace_id) "
        f"JOIN traces t USING (trace_id) {labelled}WHERE t.judgeable "
        "ORDER BY c.trace_id, c.claim_index",
        [sample],
    )
    return [(t, int(i)) for t, i in rows]


def judged_claims(store: Store, judge: str) -> set[tuple[str, int]]:
    rows = store.fetchall(
        "SELECT trace_id, claim_index FROM judge_verdicts WHERE judge = ? AND level = 'claim'",
        [judge],
    )
    return {(t, int(i)) for t, i in rows}


def start_run(store: Store, row: dict[str, Any]) -> int:
    found = store.fetchone(
        "INSERT INTO judge_runs (judge, rubric_version, model, sample, mode, status, claims, "
        "estimate, started_at, created_by) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?) "
        "RETURNING id",
        [
            row["judge"],
            row["rubric_version"],
            row["model"],
            row["sample"],
            row["mode"],
            row["claims"],
            json.dumps(row.get("estimate")),
            _now(),
            row["created_by"],
        ],
    )
    run_id = int(found[0]) if found else 0
    _LIVE.add((_where(store), run_id))
    return run_id


def finish_run(store: Store, run_id: int, status: str, judged: int, failed: int) -> None:
    store.execute(
        "UPDATE judge_runs SET status = ?, judged = ?, failed = ?, finished_at = ? WHERE id = ?",
        [status, judged, failed, _now(), run_id],
    )
    _LIVE.discard((_where(store), run_id))


def interrupt_dead_runs(store: Store) -> list[dict[str, Any]]:
    """Mark each run left 'running' by a process that died 'interrupted', with the verdicts
    and failures it stored, and as its end the time of its last recorded call (else its
    start). Returns those runs as they now read."""
    dead = [
        run_id
        for (run_id,) in store.fetchall("SELECT id FROM judge_runs WHERE status = 'running'")
        if (_where(store), int(run_id)) not in _LIVE
    ]
    for run_id in dead:
        store.execute(_INTERRUPT, [run_id] * 4)
    if not dead:
        return []
    marks = ", ".join("?" * len(dead))
    return store.fetch_dicts(f"SELECT * FROM judge_runs WHERE id IN ({marks}) ORDER BY id", dead)


_INTERRUPT = """
UPDATE judge_runs SET status = 'interrupted',
    judged = (SELECT count(*) FROM judge_verdicts WHERE run_id = ?),
    failed = (SELECT count(*) FROM judge_failures WHERE run_id = ?),
    finished_at = coalesce((
        SELECT max(c.created_at) FROM llm_calls c
        WHERE c.id IN (SELECT llm_call_id FROM judge_verdicts WHERE run_id = ?)
    ), started_at)
WHERE id = ? AND status = 'running'
"""


def set_batch(store: Store, run_id: int, batch_id: str) -> None:
    store.execute(
        "UPDATE judge_runs SET batch_id = ?, status = 'submitted' WHERE id = ?", [batch_id, run_id]
    )


def runs(store: Store, judge: str | None = None) -> list[dict[str, Any]]:
    where, params = ("WHERE judge = ? ", [judge]) if judge else ("", [])
    return store.fetch_dicts(f"SELECT * FROM judge_runs {where}ORDER BY id", params)


def last_run(store: Store, judge: str, sample: str) -> dict[str, Any] | None:
    rows = store.fetch_dicts(
        "SELECT * FROM judge_runs WHERE judge = ? AND sample = ? ORDER BY id DESC LIMIT 1",
        [judge, sample],
    )
    return rows[0] if rows else None


def open_batch_run(store: Store, judge: str, sample: str) -> dict[str, Any] | None:
    rows = store.fetch_dicts(
        "SELECT * FROM judge_runs WHERE judge = ? AND sample = ? AND status = 'submitted' "
        "ORDER BY id DESC LIMIT 1",
        [judge, sample],
    )
    return rows[0] if rows else None


def insert_verdict(store: Store, row: dict[str, Any]) -> None:
    """One claim verdict of a run; a claim this judge already judged is skipped."""
    store.execute(
        "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, explanation, "
        "origin, run_id, rubric_version, model, error_type, evidence, quote_found, llm_call_id) "
        "SELECT ?, ?, 'claim', ?, ?, ?, 'run', ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS ("
        "SELECT 1 FROM judge_verdicts WHERE judge = ? AND trace_id = ? AND claim_index = ? "
        "AND level = 'claim')",
        [
            row["trace_id"],
            row["judge"],
            row["claim_index"],
            row["label"],
            row.get("reasoning"),
            row["run_id"],
            row["rubric_version"],
            row["model"],
            row.get("error_type"),
            row.get("evidence"),
            row.get("quote_found"),
            row.get("llm_call_id"),
            row["judge"],
            row["trace_id"],
            row["claim_index"],
        ],
    )


def insert_failure(store: Store, row: dict[str, Any]) -> None:
    store.execute(
        "INSERT INTO judge_failures VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            row["run_id"],
            row["judge"],
            row["trace_id"],
            row["claim_index"],
            row["error"],
            row.get("llm_call_id"),
            _now(),
        ],
    )


def open_failures(store: Store, judge: str) -> list[dict[str, Any]]:
    """The latest failure of each claim that still has no verdict from this judge."""
    return store.fetch_dicts(
        "SELECT f.trace_id, f.claim_index, arg_max(f.error, f.created_at) AS error, "
        "arg_max(f.llm_call_id, f.created_at) AS llm_call_id, max(f.run_id) AS run_id "
        "FROM judge_failures f WHERE f.judge = ? AND NOT EXISTS (SELECT 1 FROM judge_verdicts v "
        "WHERE v.judge = f.judge AND v.trace_id = f.trace_id AND v.claim_index = f.claim_index) "
        "GROUP BY f.trace_id, f.claim_index ORDER BY f.trace_id, f.claim_index",
        [judge],
    )


def run_verdicts(store: Store, judge: str) -> list[dict[str, Any]]:
    return store.fetch_dicts(
        "SELECT trace_id, claim_index, label, error_type, explanation AS reasoning, evidence, "
        "quote_found, llm_call_id FROM judge_verdicts WHERE judge = ? AND origin = 'run' "
        "ORDER BY trace_id, claim_index",
        [judge],
    )


def insert_batch_items(store: Store, run_id: int, items: Sequence[tuple[str, str, int]]) -> None:
    for custom_id, trace_id, claim_index in items:
        store.execute(
            "INSERT INTO judge_batch_items VALUES (?, ?, ?, ?)",
            [run_id, custom_id, trace_id, claim_index],
        )


def batch_items(store: Store, run_id: int) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = {}
    for custom_id, trace_id, index in store.fetchall(
        "SELECT custom_id, trace_id, claim_index FROM judge_batch_items WHERE run_id = ? "
        "ORDER BY custom_id, claim_index",
        [run_id],
    ):
        found.setdefault(custom_id, []).append((trace_id, int(index)))
    return found


def llm_call(store: Store, call_id: int) -> dict[str, Any] | None:
    rows = store.fetch_dicts("SELECT * FROM llm_calls WHERE id = ?", [call_id])
    return rows[0] if rows else None


def verdict_counts(store: Store) -> dict[str, int]:
    rows = store.fetchall("SELECT origin, count(*) FROM judge_verdicts GROUP BY origin")
    return {origin: int(n) for origin, n in rows}
