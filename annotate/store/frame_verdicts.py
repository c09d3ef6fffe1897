"""The judge's verdicts over a frame, per stratum, as trace signatures: the traces grouped by
their latest response-level label, the set of their latest claim-level labels and each label's
claim verdicts per trace, with those verdicts summed. Any label mapping chosen later gives each
group one outcome and one trace's claim counts, so rates over files read in place need only
these rows (annotate.rates.undrawn), and resample them as the store's traces.

The SQL is one text over `verdicts(trace_id, s0.., judge, level, claim, label, pos, nv)` (the
verdicts of the traces of `sig_frame(trace_id, s0..)`, with their stratum values); the latest verdict per (trace, judge, level, claim) is the one with the
highest `pos` (a file's list order, the store's rowid), as in store.rates.frame_table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from annotate.store import Store
from annotate.store.samples import Filters, frame_cte, stratum_key_text

# (stratum key text, judge, response label, claim labels, claim verdicts per label, traces)
Signature = tuple[str, str, str | None, tuple[str, ...], tuple[int, ...], int]

# A trace with one verdict (`nv`: its verdicts) is its own signature: no group by trace,
# the one costly step over a file's every verdict.
_SIGNATURES = (
    "per_trace AS (SELECT trace_id, {keys}, judge, "
    "arg_max(label, pos) FILTER (WHERE level = 'response') AS response_label "
    "FROM verdicts WHERE nv > 1 GROUP BY ALL UNION ALL "
    "SELECT trace_id, {keys}, judge, CASE WHEN level = 'response' THEN label END "
    "FROM verdicts WHERE nv = 1), "
    "claim_latest AS (SELECT trace_id, judge, claim, arg_max(label, pos) AS label "
    "FROM verdicts WHERE level = 'claim' GROUP BY ALL), "
    "claim_n AS (SELECT trace_id, judge, label, count(*) AS n FROM claim_latest GROUP BY ALL), "
    "claim_sets AS (SELECT trace_id, judge, list(label ORDER BY label) AS claim_labels, "
    "list(n ORDER BY label) AS claim_counts FROM claim_n GROUP BY ALL), "
    "sig AS MATERIALIZED (SELECT {keys}, p.judge, p.response_label, "
    "coalesce(c.claim_labels, []::VARCHAR[]) AS claim_labels, "
    "coalesce(c.claim_counts, []::BIGINT[]) AS claim_counts "
    "FROM per_trace p LEFT JOIN claim_sets c USING (trace_id, judge)) "
    "SELECT {keys}, judge, response_label, claim_labels, claim_counts, count(*) AS n "
    "FROM sig GROUP BY ALL"
)


def signatures(
    store: Store,
    ctes: str,
    params: Sequence[Any],
    width: int,
    batch: Any = None,
    text_keys: bool = False,
    suffix: str = "",
) -> list[Signature]:
    """The signature rows of `sig_frame`'s traces; `ctes` defines sig_frame and verdicts
    (reading `_batch` when `batch` is given). Stratum keys come back as their stored text
    (`text_keys`: s0 already is that text). `suffix` (UNION ALL ...) adds rows of the same
    columns (a signature may then come in several rows: merge_signatures sums them)."""
    keys = ", ".join(f"s{i}" for i in range(width))
    sql = f"WITH {ctes}, {_SIGNATURES.format(keys=keys)}{suffix}"
    if batch is None:
        rows = store.fetchall(sql, list(params))
    else:
        rows = store.fetch_with_batch(sql, batch, list(params))
    return _combine(rows, width, text_keys)


def _combine(rows: Sequence[tuple[Any, ...]], width: int, text_keys: bool) -> list[Signature]:
    """Rows (keys, judge, response label, claim labels, one trace's verdicts per label,
    traces) as signatures, each label's verdicts summed over the traces."""
    found = []
    for row in rows:
        values, (judge, response, labels, per_trace, traces) = row[:width], row[width:]
        text = values[0] if text_keys else stratum_key_text(tuple(values))
        summed = tuple(int(n) * int(traces) for n in per_trace)
        found.append((text, judge, response, tuple(labels), summed, int(traces)))
    return sorted(found, key=_order)


def _order(row: Signature) -> tuple[Any, ...]:
    return (row[0], row[1], row[2] is None, row[2] or "", row[3], per_trace(row), row[5])


def per_trace(row: Signature) -> tuple[Fraction, ...]:
    """One trace's claim verdicts per label (the row's mean where a row recorded before
    signatures kept them mixes traces of different counts)."""
    return tuple(Fraction(n, max(row[5], 1)) for n in row[4])


def _store_verdicts(width: int) -> str:
    keys = "".join(f", f.s{i}" for i in range(width))
    return (
        f"verdicts AS (SELECT v.trace_id{keys}, v.judge, v.level, "
        "CAST(v.claim_index AS VARCHAR) AS claim, v.label, v.rowid AS pos, 2 AS nv "
        "FROM judge_verdicts v JOIN sig_frame f USING (trace_id))"
    )


def drawn_signatures(store: Store, sample: str) -> list[Signature]:
    """The sample's units, by their stored stratum key, with the store's verdicts."""
    ctes = (
        "sig_frame AS (SELECT trace_id, stratum_key AS s0 FROM sample_units WHERE sample = ?), "
        + _store_verdicts(1)
    )
    return signatures(store, ctes, [sample], 1, text_keys=True)


def store_frame_signatures(
    store: Store, filters: Filters, by: Sequence[str], max_import_id: int | None
) -> list[Signature]:
    """The frame of traces in the store (an imported population), as a sample over it sees it."""
    cte, params = frame_cte(filters, by, max_import_id)
    ctes = f"{cte}, sig_frame AS (SELECT * FROM frame), {_store_verdicts(len(by))}"
    return signatures(store, ctes, params, len(by))


def add_signatures(store: Store, sample: str, rows: Sequence[Signature]) -> None:
    store.execute("DELETE FROM sample_judge_counts WHERE sample = ?", [sample])
    for key, judge, response, labels, claims, traces in rows:
        store.execute(
            "INSERT INTO sample_judge_counts (sample, stratum_key, judge, response_label, "
            "claim_labels, claim_verdicts, traces) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [sample, key, judge, response, list(labels), list(claims), traces],
        )


def recorded_signatures(store: Store, sample: str) -> list[Signature]:
    rows = store.fetchall(
        "SELECT stratum_key, judge, response_label, claim_labels, claim_verdicts, traces "
        "FROM sample_judge_counts WHERE sample = ?",
        [sample],
    )
    found = [(r[0], r[1], r[2], tuple(r[3]), tuple(int(n) for n in r[4]), int(r[5])) for r in rows]
    return sorted(found, key=_order)


def merge_signatures(*parts: Sequence[Signature]) -> list[Signature]:
    """Several sets of rows as one: traces and claim verdicts of equal signatures (one trace's
    verdicts per label alike) added."""
    totals: dict[tuple[Any, ...], list[Any]] = {}
    for rows in parts:
        for row in rows:
            key, judge, response, labels, claims, traces = row
            group = (key, judge, response, labels, per_trace(row))
            entry = totals.setdefault(group, [[0] * len(labels), 0])
            entry[0] = [a + b for a, b in zip(entry[0], claims, strict=True)]
            entry[1] += traces
    found = [(*k[:4], tuple(v[0]), v[1]) for k, v in totals.items()]
    return sorted(found, key=_order)  # type: ignore[arg-type]


def key_values(key: str) -> list[Any]:
    return list(json.loads(key))


# (judge, label, verdicts) of the undrawn frame traces of source samples: with the store's
# own verdicts, the labels a judge used (over several samples of the same files, the largest)
UNDRAWN_LABELS = (
    "SELECT judge, label, max(verdicts) AS verdicts FROM (SELECT sample, judge, label, "
    "sum(n) AS verdicts FROM (SELECT sample, judge, response_label AS label, traces AS n "
    "FROM sample_judge_counts WHERE response_label IS NOT NULL UNION ALL "
    "SELECT sample, judge, unnest(claim_labels) AS label, unnest(claim_verdicts) AS n "
    "FROM sample_judge_counts) GROUP BY ALL) GROUP BY judge, label"
)
