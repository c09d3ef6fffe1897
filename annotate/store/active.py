"""SQL for active (judge-guided) samples: the table of their draws, every frame trace with the
judge's verdict counts and score uncertainty, and each drawn trace's own probability.

Identifiers come only from samples.frame_cte's closed set; every value is a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa

from annotate.store import Store
from annotate.store.samples import Filters, frame_cte


def frame_traces(
    store: Store,
    filters: Filters,
    by: Sequence[str],
    max_import_id: int,
    judges: Sequence[str],
    outcomes: Mapping[tuple[str, str], str],
) -> pd.DataFrame:
    """One row per frame trace: trace_id, s0.., and per judge k (in `judges` order) jcu{k},
    jcn{k}, jresp{k}, nclaims (as store.rates.frame_table's, one trace a row) and score{k}, the
    largest s(1 - s) of its latest verdicts' scores in [0, 1] (NULL: none); `bad_score{k}`
    counts scores outside [0, 1]."""
    cte, params = frame_cte(filters, by, max_import_id)
    mapping = pa.table(
        {
            "judge": [j for j, _ in outcomes],
            "label": [label for _, label in outcomes],
            "outcome": list(outcomes.values()),
        },
        schema=pa.schema(
            [("judge", pa.string()), ("label", pa.string()), ("outcome", pa.string())]
        ),
    )
    per_judge = "".join(_judge_columns(k) for k in range(len(judges)))
    keys = "".join(f"f.s{i}, " for i in range(len(by)))
    sql = (
        f"WITH {cte}, latest AS (SELECT trace_id, judge, level, claim_index, "
        "arg_max(label, rowid) AS label, arg_max(score, rowid) AS score FROM judge_verdicts "
        "WHERE judge IN (SELECT unnest(?)) AND trace_id IN (SELECT trace_id FROM frame) "
        "GROUP BY trace_id, judge, level, claim_index), "
        "judged AS (SELECT v.trace_id, v.judge, "
        "count(*) FILTER (WHERE v.level = 'claim' AND m.outcome = 'unsupported') AS jcu, "
        "count(*) FILTER (WHERE v.level = 'claim' AND m.outcome IN ('supported', 'unsupported')) AS jcn, "
        "bool_or(m.outcome = 'unsupported') FILTER (WHERE v.level = 'response' "
        "  AND m.outcome IN ('supported', 'unsupported')) AS jresp, "
        "max(v.score * (1 - v.score)) FILTER (WHERE v.score BETWEEN 0 AND 1) AS score, "
        "count(*) FILTER (WHERE isfinite(v.score) AND NOT v.score BETWEEN 0 AND 1) AS bad_score "
        "FROM latest v LEFT JOIN _batch m ON m.judge = v.judge AND m.label = v.label "
        "GROUP BY v.trace_id, v.judge), "
        "claim_counts AS (SELECT trace_id, count(*) AS n FROM claims "
        "WHERE trace_id IN (SELECT trace_id FROM frame) GROUP BY trace_id) "
        f"SELECT f.trace_id, {keys}coalesce(c.n, 0) AS nclaims{per_judge} FROM frame f "
        "LEFT JOIN claim_counts c USING (trace_id) "
        + "".join(
            f"LEFT JOIN judged j{k} ON j{k}.trace_id = f.trace_id AND j{k}.judge = ? "
            for k in range(len(judges))
        )
        + "ORDER BY f.trace_id"
    )
    table = store.fetch_arrow_with_batch(sql, mapping, [*params, list(judges), *judges])
    return table.to_pandas()


def _judge_columns(k: int) -> str:
    return (
        f", coalesce(j{k}.jcu, 0) AS jcu{k}, coalesce(j{k}.jcn, 0) AS jcn{k}, "
        f"CASE WHEN j{k}.jresp THEN 'unsupported' WHEN NOT j{k}.jresp THEN 'supported' END "
        f"AS jresp{k}, j{k}.score AS score{k}, coalesce(j{k}.bad_score, 0) AS bad_score{k}"
    )


def set_probabilities(
    store: Store, sample: str, trace_ids: Sequence[str], pi: Sequence[float]
) -> None:
    """Each drawn trace's own inclusion probability in its draw and its weight 1 / pi."""
    table = pa.table(
        {"trace_id": pa.array(list(trace_ids), pa.string()), "pi": pa.array(list(pi), pa.float64())}
    )
    store.fetch_with_batch(
        "UPDATE sample_units u SET inclusion_probability = b.pi, weight = 1 / b.pi "
        "FROM _batch b WHERE u.trace_id = b.trace_id AND u.sample = ?",
        table,
        [sample],
    )


def add_draw(store: Store, sample: str, draw: int, row: Mapping[str, Any]) -> None:
    store.execute(
        "INSERT INTO active_draws VALUES (?, ?, ?, ?, ?, ?, ?)",
        [sample, draw, row["judge"], row["basis"], row["budget"], row["floor_weight"],
         row["hash_rule"]],
    )  # fmt: skip


def draws(store: Store, sample: str) -> list[dict[str, Any]]:
    return store.fetch_dicts(
        "SELECT draw, judge, basis, budget, floor_weight, hash_rule FROM active_draws "
        "WHERE sample = ? ORDER BY draw",
        [sample],
    )


def unit_draws(store: Store, sample: str) -> pd.DataFrame:
    """trace_id, draw and pi of each unit of an active sample."""
    rows = store.fetchall(
        "SELECT trace_id, draw, inclusion_probability FROM sample_units WHERE sample = ? "
        "ORDER BY trace_id",
        [sample],
    )
    return pd.DataFrame(rows, columns=["trace_id", "draw", "pi"])


@dataclass(frozen=True)
class ActiveDesign:
    """An active sample's draws (draw, judge, basis, budget, floor_weight, hash_rule) and each
    unit's draw and own probability in it (trace_id, draw, pi)."""

    draws: pd.DataFrame
    units: pd.DataFrame


def active_design(store: Store, sample: str) -> ActiveDesign | None:
    """None for a sample that was not drawn actively."""
    found = draws(store, sample)
    return ActiveDesign(pd.DataFrame(found), unit_draws(store, sample)) if found else None
