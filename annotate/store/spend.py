"""The tokens LLM calls used, grouped for pricing (model, batch or not) and by what they were
for: one judge run, the calls after a given one, or every call by sample and rubric version."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from annotate.store import Store

TOKENS = "count(*) AS calls, " + ", ".join(
    f"coalesce(sum({column}), 0)::BIGINT AS {column}"
    for column in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
)
PRICED = "c.model, c.batch_id IS NOT NULL AS batch"


def _grouped(store: Store, where: str, params: list[Any], keys: str = "") -> list[dict[str, Any]]:
    extra = f"{keys}, " if keys else ""
    return store.fetch_dicts(
        f"SELECT {extra}{PRICED}, {TOKENS} FROM llm_calls c {where} GROUP BY ALL ORDER BY ALL",
        params,
    )


def run_tokens(store: Store, run_id: int) -> list[dict[str, Any]]:
    """The calls of one judge run: those its verdicts and failures point at."""
    where = (
        "WHERE c.id IN (SELECT llm_call_id FROM judge_verdicts WHERE run_id = ? "
        "UNION SELECT llm_call_id FROM judge_failures WHERE run_id = ?)"
    )
    return _grouped(store, where, [run_id, run_id])


def last_call_id(store: Store) -> int:
    return int(store.scalar("SELECT coalesce(max(id), 0) FROM llm_calls"))


def tokens_after(
    store: Store, after_id: int, purpose: str, sample: str | None = None
) -> list[dict[str, Any]]:
    """Calls for `purpose` made after call `after_id`; with `sample`, only its traces' calls."""
    where, params = "WHERE c.id > ? AND c.purpose = ?", [after_id, purpose]
    if sample is not None:
        where += (
            " AND (c.sample = ? OR c.trace_id IN "
            "(SELECT trace_id FROM sample_units WHERE sample = ?))"
        )
        params += [sample, sample]
    return _grouped(store, where, params)


def tokens_by_scope(
    store: Store, sample: str | None = None, since: datetime | None = None
) -> list[dict[str, Any]]:
    """Every call grouped by sample (its own, else its trace's samples), rubric version and
    purpose. A trace in two samples counts its extraction call under each."""
    where = (
        "LEFT JOIN (SELECT DISTINCT sample AS unit_sample, trace_id FROM sample_units) u "
        "ON c.sample IS NULL AND u.trace_id = c.trace_id WHERE TRUE"
    )
    params: list[Any] = []
    if sample is not None:
        where += " AND coalesce(c.sample, u.unit_sample) = ?"
        params.append(sample)
    if since is not None:
        where += " AND c.created_at >= ?"
        params.append(since)
    keys = "coalesce(c.sample, u.unit_sample) AS sample, c.rubric_version, c.purpose"
    return _grouped(store, where, params, keys)


def tokens_total(store: Store, since: datetime | None = None) -> list[dict[str, Any]]:
    """Every call once (whatever samples its trace is in)."""
    if since is None:
        return _grouped(store, "", [])
    return _grouped(store, "WHERE c.created_at >= ?", [since])


def tokens_per_run(store: Store, version: int | None = None) -> list[dict[str, Any]]:
    """Each judge run (of one rubric version, when given) with its calls' tokens by model."""
    where, params = ("WHERE r.rubric_version = ?", [version]) if version is not None else ("", [])
    return store.fetch_dicts(
        f"SELECT r.id AS run_id, {PRICED}, {TOKENS} FROM judge_runs r "
        "JOIN (SELECT run_id, llm_call_id FROM judge_verdicts UNION "
        "SELECT run_id, llm_call_id FROM judge_failures) l ON l.run_id = r.id "
        f"JOIN llm_calls c ON c.id = l.llm_call_id {where} GROUP BY ALL ORDER BY ALL",
        params,
    )
