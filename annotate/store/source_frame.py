"""The frame of a sample drawn in place, read from the files once into a temporary table.

One pass over the files (annotate.store.sources reads them) keeps, per file row, whether it
has a trace id, is judgeable and is in the frame; for frame rows their trace id, stratum
values, the draw hash's first 64 bits and the judge's verdicts. A verdict list of structs
(Parquet, typed JSON Lines) keeps a trace's one verdict as four text columns and only longer
lists whole: the judge counts and the undrawn signatures then group those columns, and only
traces with several verdicts go through the per-trace rules. The counts, draw and signatures
are the rules of annotate.store.samples and annotate.store.frame_verdicts, unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from annotate.store import Store, id_batch
from annotate.store.frame_verdicts import Signature, merge_signatures, signatures
from annotate.store.samples import Filters, StratumKey
from annotate.store.sources import (
    column_expr,
    file_verdicts_cte,
    judgeable_expr,
    reader,
    struct_list_fields,
    struct_list_text_fields,
)

# The draw's hash "<seed>:<trace_id>" (store.samples.frame_cte), its first 16 hex digits
_HASH_PREFIX = "CAST('0x' || left(sha256(CAST(? AS VARCHAR) || ':' || trace_id), 16) AS UBIGINT)"
_ONE = ("judge", "level", "claim", "label")  # a one-verdict trace's fields: vj, vl, vc, vlab
_ONE_AS = ("vj", "vl", "vc", "vlab")


def is_flat(judge_kind: str | None) -> bool:
    """Whether the judge column is a list of structs with text judge and label fields."""
    return {"judge", "label"} <= struct_list_text_fields(judge_kind)


@dataclass(frozen=True)
class FileRows:
    """What a pass over the files reads: the files (`glob`, `fmt`), their `columns` (name ->
    DuckDB type), the field `mapping`, the frame's `filters` and the strata columns `by`."""

    glob: str
    fmt: str
    columns: Mapping[str, str]
    mapping: Mapping[str, str]
    filters: Filters
    by: Sequence[str]

    def kind_of(self, name: str) -> str | None:
        """The type of the column the field `name` is read from."""
        return self.columns.get(self.mapping.get(name, name))


def flagged_ctes(rows: FileRows) -> tuple[str, list[Any]]:
    """`picked, flagged`: per file row its trace_id, judgeable, judge, s0.. and `in_frame`
    (the frame rule); the parameters are the reader's glob, then the filters'."""
    columns, mapping, filters, by = rows.columns, rows.mapping, rows.filters, rows.by

    def field(name: str) -> str:
        expr = column_expr(columns, mapping, name)
        return expr if expr is not None else "NULL"

    context_kind = rows.kind_of("context")
    picks = [
        f"CAST({field('trace_id')} AS VARCHAR) AS trace_id",
        f"{judgeable_expr(field('context'), context_kind)} AS judgeable",
        f"{field('judge')} AS judge",
        f"TRY_CAST({field('timestamp')} AS TIMESTAMP) AS _ts",
        *(f"CAST({field(name)} AS VARCHAR) AS s{i}" for i, name in enumerate(by)),
    ]
    named = [*filters.columns.items(), *filters.attributes.items()]
    picks += [f"CAST({field(name)} AS VARCHAR) AS f{i}" for i, (name, _) in enumerate(named)]
    conds, params = _frame_conditions(filters, named)
    sql = (
        f"picked AS (SELECT {', '.join(picks)} FROM {reader(rows.fmt)}), "
        f"flagged AS (SELECT *, coalesce({' AND '.join(conds)}, false) AS in_frame FROM picked)"
    )
    return sql, [rows.glob, *params]


def frame_select(rows: FileRows, seed: int) -> tuple[str, list[Any]]:
    """The one pass: per file row `has_id`, `judgeable`, `in_frame`, and for frame rows
    `trace_id`, s0.., `hk`, `nv` (verdicts, flat lists only), vj.. (a one-verdict trace's
    verdict) and `judge` (the list: whole, or only when it holds several)."""
    ctes, params = flagged_ctes(rows)
    kept = "".join(f", CASE WHEN in_frame THEN s{i} END AS s{i}" for i in range(len(rows.by)))
    verdicts = _verdict_columns(rows.kind_of("judge"))
    sql = (  # the parameters in the text's order: the reader's glob, the filters', the seed
        f"WITH {ctes} "
        "SELECT CASE WHEN in_frame THEN trace_id END AS trace_id, trace_id IS NOT NULL AS has_id, "
        f"judgeable AND trace_id IS NOT NULL AS judgeable, in_frame{kept}, {verdicts}, "
        f"CASE WHEN in_frame THEN {_HASH_PREFIX} END AS hk FROM flagged"
    )
    return sql, [*params, seed]


def _verdict_columns(judge_kind: str | None) -> str:
    """nv, vj, vl, vc, vlab and judge of a frame row (see frame_select)."""
    if not is_flat(judge_kind):
        ones = ", ".join(f"NULL::VARCHAR AS {name}" for name in _ONE_AS)
        return f"NULL::BIGINT AS nv, {ones}, CASE WHEN in_frame THEN judge END AS judge"
    fields = struct_list_fields(judge_kind)
    ones = ", ".join(
        f'CASE WHEN in_frame AND len(judge) = 1 THEN CAST(judge[1]."{name}" AS VARCHAR) END '
        f"AS {alias}"
        if name in fields
        else f"NULL::VARCHAR AS {alias}"
        for name, alias in zip(_ONE, _ONE_AS, strict=True)
    )
    return (
        "CASE WHEN in_frame THEN coalesce(len(judge), 0) END AS nv, "
        f"{ones}, CASE WHEN in_frame AND len(judge) > 1 THEN judge END AS judge"
    )


def _frame_conditions(
    filters: Filters, named: Sequence[tuple[str, Sequence[str]]]
) -> tuple[list[str], list[Any]]:
    """The frame rule over the picked columns (after the reader's glob, in the SQL's order)."""
    conds = ["trace_id IS NOT NULL", "judgeable"]
    conds.append("trace_id NOT IN (SELECT trace_id FROM canary_responses)")
    params: list[Any] = []
    if filters.since:
        conds.append("_ts >= ?")
        params.append(filters.since)
    if filters.until:
        conds.append("_ts < ?")
        params.append(filters.until)
    for index, (_, values) in enumerate(named):
        conds.append(f"f{index} IN ({', '.join('?' for _ in values)})")
        params.extend(values)
    if filters.judge:
        conds.append("list_has_any(json_extract_string(to_json(judge), '$[*].label'), ?)")
        params.append(list(filters.judge))
    return conds, params


def create_frame(store: Store, table: str, select: str, params: Sequence[Any]) -> None:
    """The frame of `frame_select` as the temporary table `table` (a name we chose): the files
    are read once; counts, draw and signatures read the table (it spills past the limit)."""
    store.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {select}", list(params))


def drop_frame(store: Store, table: str) -> None:
    store.execute(f"DROP TABLE IF EXISTS temp.{table}")


def totals(store: Store, table: str) -> tuple[int, int]:
    """(rows with a trace id, judgeable rows) in the source's frame table."""
    row = store.fetchone(
        f"SELECT count(*) FILTER (WHERE has_id), count(*) FILTER (WHERE judgeable) FROM {table}"
    )
    return (int(row[0]), int(row[1])) if row else (0, 0)


def frame_cte(table: str, width: int) -> str:
    """`frame(trace_id, s0.., judge)` over the frame table (a list not flat: every verdict)."""
    keys = "".join(f", s{i}" for i in range(width))
    return f"frame AS (SELECT trace_id{keys}, judge FROM {table} WHERE in_frame)"


def candidates_cte(table: str, width: int, deepest: int, seed: int) -> tuple[str, list[Any]]:
    """`frame(trace_id, s0.., h)` of the traces that may rank within `deepest` in their
    stratum: its deepest + 1 smallest hash prefixes `hk` (one top-k pass), and where the
    deepest-th and the next tie, every trace of that prefix or less. The prefix orders as the
    hash does, so the (h, trace_id) order of these is the frame's; only they are hashed whole."""
    keys = ", ".join(f"s{i}" for i in range(width))
    same = " AND ".join(f"p.s{i} IS NOT DISTINCT FROM t.s{i}" for i in range(width))
    depth = int(deepest)
    pool = f"(SELECT trace_id, {keys}, hk FROM {table} WHERE in_frame)"  # inlined: no copy
    cte = (
        f"lowest AS (SELECT {keys}, min_by(trace_id, hk, {depth + 1}) AS ids, "
        f"list_sort(min(hk, {depth + 1})) AS hks FROM {pool} GROUP BY ALL), "
        f"at_depth AS (SELECT * FROM lowest WHERE len(hks) > {depth} "
        f"AND hks[{depth}] = hks[{depth + 1}]), "
        f"picked AS (SELECT unnest(ids) AS trace_id, {keys} FROM lowest UNION SELECT p.trace_id, "
        f"{', '.join(f'p.s{i}' for i in range(width))} FROM {pool} p JOIN at_depth t ON {same} "
        f"WHERE p.hk <= t.hks[{depth}]), "
        f"frame AS (SELECT trace_id, {keys}, sha256(CAST(? AS VARCHAR) || ':' || trace_id) AS h "
        "FROM picked)"
    )
    return cte, [seed]


def outcome_table(outcomes: Sequence[tuple[str, str, str]]) -> pa.Table:
    """The judges' (judge, label, outcome) mapping as the `_batch` table the counts join."""
    names = ("judge", "label", "outcome")
    return pa.table(
        {name: [o[i] for o in outcomes] for i, name in enumerate(names)},
        schema=pa.schema([(n, pa.string()) for n in names]),
    )


def flat_counts(
    store: Store, table: str, width: int, outcomes: Sequence[tuple[str, str, str]]
) -> list[tuple[StratumKey, int, float | None]]:
    """store.samples.count_frame over a flat frame table: a one-verdict trace is flagged by
    its verdict's outcome, a trace of several by any of theirs (bool_or); none: no verdict."""
    keys = ", ".join(f"s{i}" for i in range(width))
    mapping = outcome_table(outcomes)
    rows = store.fetch_with_batch(
        "WITH m AS (SELECT judge, label, bool_or(outcome = 'unsupported') AS flagged FROM _batch "
        "WHERE outcome IN ('supported', 'unsupported') GROUP BY ALL), "
        f"several AS (SELECT trace_id, v.judge AS judge, v.label AS label FROM (SELECT trace_id, "
        f"unnest(judge) AS v FROM {table} WHERE in_frame AND nv > 1)), "
        "judged AS (SELECT v.trace_id, bool_or(m.flagged) AS flagged FROM several v "
        "JOIN m USING (judge, label) GROUP BY v.trace_id), "
        f"flags AS (SELECT {keys}, m.flagged FROM {table} f LEFT JOIN m "
        f"ON m.judge = f.vj AND m.label = f.vlab WHERE f.in_frame AND f.nv <= 1 UNION ALL "
        f"SELECT {keys}, j.flagged FROM {table} f LEFT JOIN judged j USING (trace_id) "
        "WHERE f.in_frame AND f.nv > 1) "
        f"SELECT {keys}, count(*), avg(CASE WHEN flagged THEN 1.0 WHEN NOT flagged THEN 0.0 END) "
        f"FROM flags GROUP BY {keys} "
        f"ORDER BY {', '.join(f's{i} NULLS LAST' for i in range(width))}",
        mapping,
    )
    return [(tuple(row[:width]), int(row[width]), row[width + 1]) for row in rows]


def flat_signatures(
    store: Store, table: str, width: int, judge_kind: str | None, drawn: Sequence[str]
) -> list[Signature]:
    """The undrawn frame traces' signatures (store.frame_verdicts) from a flat frame table:
    a one-verdict trace is its own signature, by the import's rules (no judge name is
    "imported"; no level is "claim" with a claim index, else "response"); the traces with
    several verdicts by the per-trace rules."""
    keys = ", ".join(f"s{i}" for i in range(width))
    undrawn = "in_frame AND trace_id NOT IN (SELECT trace_id FROM _batch)"
    ctes = (
        f"sig_frame AS (SELECT trace_id, {keys}, judge FROM {table} WHERE {undrawn} AND nv > 1), "
        + file_verdicts_cte(judge_kind, width)
    )
    single = (  # grouped by text columns first: lists are made per group, not per trace
        f" UNION ALL SELECT {keys}, judge, CASE WHEN lvl = 'response' THEN vlab END, "
        "CASE WHEN lvl = 'claim' THEN [vlab] ELSE []::VARCHAR[] END, "
        "CASE WHEN lvl = 'claim' THEN [1] ELSE []::BIGINT[] END, n FROM ("
        f"SELECT {keys}, coalesce(nullif(vj, ''), 'imported') AS judge, lvl, vlab, count(*) AS n "
        "FROM (SELECT *, coalesce(nullif(vl, ''), CASE WHEN vc IS NOT NULL THEN 'claim' ELSE "
        f"'response' END) AS lvl FROM {table} WHERE {undrawn} AND nv = 1 AND vlab <> '') "
        "GROUP BY ALL)"
    )
    found = signatures(store, ctes, [], width, id_batch(drawn), suffix=single)
    return merge_signatures(found)
