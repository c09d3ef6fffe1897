"""A sample's frame over files read in place, in one aggregate pass: no per-row table.

The pass groups the file rows by what the plan and the judge's signatures need (whether a
row has a trace id, is judgeable, is in the frame; its stratum; a one-verdict trace's
verdict as text columns; a trace of several verdicts as its signature per judge and its
distinct (judge, label) pairs) and keeps, per group, its row count and the `depth` smallest
draw keys (the SHA-256 of "<seed>:<trace_id>" in hex, then the trace id: the draw's order).
A stratum's first `depth` traces are among its groups' firsts, so the counts, the draw of
up to `depth` per stratum and the undrawn traces' signatures (the drawn ones found in their
group's keys and taken off) all read the small grouped table. The rules are those of
annotate.store.samples (count_frame, rank_frame) and annotate.store.frame_verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotate.store import Store, id_batch
from annotate.store.frame_verdicts import Signature, merge_signatures, signatures
from annotate.store.samples import StratumKey, rank_frame
from annotate.store.source_frame import FileRows, flagged_ctes, is_flat, outcome_table
from annotate.store.sources import quote, struct_list_fields

_HASH_HEX = 64  # sha256() gives 64 hex digits: a key is the hash, then the trace id
# A one-verdict trace's verdict, as text (vc: whether it names a claim)
_NO_VERDICT = "NULL::VARCHAR AS vj, NULL::VARCHAR AS vl, NULL::BOOLEAN AS vc, NULL::VARCHAR AS vlab"
_NO_SEVERAL = (
    "NULL::STRUCT(sig STRUCT(judge VARCHAR, response_label VARCHAR, claim_labels VARCHAR[], "
    "claim_counts BIGINT[])[], pairs STRUCT(judge VARCHAR, label VARCHAR)[]) AS multi"
)
# A trace of several verdicts, by judge (store.frame_verdicts' per-trace rules): the latest
# response-level label, and the latest label of each claim (the last in the list's order)
_LATEST_CLAIMS = (
    "[i.x FOR i, p IN items IF i.j = jj AND i.l = 'claim' AND NOT coalesce(list_bool_or("
    "[y.j = i.j AND y.l = 'claim' AND y.c IS NOT DISTINCT FROM i.c FOR y IN items[p + 1:]]), "
    "false)]"
)
_BY_JUDGE = (
    "[{'judge': jj, 'response_label': list_extract([i.x FOR i IN items IF i.j = jj AND "
    f"i.l = 'response'], -1), 'latest': {_LATEST_CLAIMS}}} "
    "FOR jj IN list_sort(list_distinct([i.j FOR i IN items]))]"
)
_SIGNED = (
    "[{'judge': s.judge, 'response_label': s.response_label, "
    "'claim_labels': list_sort(list_distinct(s.latest)), 'claim_counts': "
    "[len([z FOR z IN s.latest IF z = u]) FOR u IN list_sort(list_distinct(s.latest))]} "
    "FOR s IN by_judge]"
)


def has_pass(judge_kind: str | None, has_judge: bool) -> bool:
    """Whether the pass reads this judge column: none, or a list of structs with text judge
    and label fields (Parquet, typed JSON Lines); anything else goes through the table."""
    return not has_judge or is_flat(judge_kind)


def pass_select(rows: FileRows, seed: int, depth: int) -> tuple[str, list[Any]]:
    """The grouped rows: has_id, judgeable, in_frame, s0.., vj, vl, vc, vlab, msig, mpairs,
    `n` (rows) and `keys` (the group's `depth` smallest draw keys), `g` (a group number)."""
    ctes, params = flagged_ctes(rows)
    judge_kind = rows.kind_of("judge")
    by = rows.by
    verdicts = (
        _verdict_columns(judge_kind) if is_flat(judge_kind) else f"{_NO_VERDICT}, {_NO_SEVERAL}"
    )
    keys = "".join(f", CASE WHEN in_frame THEN s{i} END AS s{i}" for i in range(len(by)))
    kept = "".join(f", s{i}" for i in range(len(by)))
    sql = (  # the parameters in the text's order: the reader's glob, the filters', the seed
        f"WITH {ctes}, pass_rows AS (SELECT trace_id IS NOT NULL AS has_id, "
        f"judgeable AND trace_id IS NOT NULL AS judgeable, in_frame{keys}, {verdicts}, "
        "CASE WHEN in_frame THEN sha256(CAST(? AS VARCHAR) || ':' || trace_id) || trace_id END "
        "AS k FROM flagged) "
        f"SELECT row_number() OVER () AS g, has_id, judgeable, in_frame{kept}, vj, vl, vc, vlab, "
        "multi.sig AS msig, multi.pairs AS mpairs, n, keys FROM (SELECT has_id, judgeable, "
        f"in_frame{kept}, vj, vl, vc, vlab, multi, count(*) AS n, min(k, {int(depth)}) AS keys "
        "FROM pass_rows GROUP BY ALL)"
    )
    return sql, [*params, seed]


def _verdict_columns(judge_kind: str | None) -> str:
    """A frame row's one verdict (vj, vl, vc, vlab), or its several as `multi`: their
    signature by judge (`sig`, over the labelled verdicts by the import's rules: no judge
    name is "imported", no level is "claim" when a claim is named, else "response") and
    their distinct raw judge and label (`pairs`). Only rows of several compute `multi`."""
    fields = struct_list_fields(judge_kind)

    def get(item: str, name: str) -> str:
        return f"CAST({item}.{quote(name)} AS VARCHAR)" if name in fields else "NULL::VARCHAR"

    one = "in_frame AND len(judge) = 1"
    several = "in_frame AND len(judge) > 1"
    claim = get("v", "claim")
    level = f"coalesce(nullif({get('v', 'level')}, ''), CASE WHEN {claim} IS NOT NULL THEN 'claim' ELSE 'response' END)"
    items = (
        f"[{{'j': coalesce(nullif({get('v', 'judge')}, ''), 'imported'), 'l': {level}, "
        f"'c': {claim}, 'x': {get('v', 'label')}}} FOR v IN judge "
        f"IF {get('v', 'label')} IS NOT NULL AND {get('v', 'label')} <> '']"
    )
    pairs = (
        f"list_sort(list_distinct([{{'judge': {get('v', 'judge')}, 'label': "
        f"{get('v', 'label')}}} FOR v IN judge]))"
    )
    return (
        f"CASE WHEN {one} THEN {get('judge[1]', 'judge')} END AS vj, "
        f"CASE WHEN {one} THEN {get('judge[1]', 'level')} END AS vl, "
        f"CASE WHEN {one} THEN {get('judge[1]', 'claim')} IS NOT NULL END AS vc, "
        f"CASE WHEN {one} THEN {get('judge[1]', 'label')} END AS vlab, "
        f"CASE WHEN {several} THEN {{'sig': {_SIGNED.replace('by_judge', _BY_JUDGE).replace('items', f'({items})')}, 'pairs': {pairs}}} END AS multi"
    )


def create_pass(store: Store, table: str, select: str, params: Sequence[Any]) -> None:
    """The pass's groups as the temporary table `table` (a name we chose)."""
    store.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {select}", list(params))


def pass_totals(store: Store, table: str) -> tuple[int, int]:
    """(rows with a trace id, judgeable rows) of the files."""
    row = store.fetchone(
        f"SELECT coalesce(sum(n) FILTER (WHERE has_id), 0), "
        f"coalesce(sum(n) FILTER (WHERE judgeable), 0) FROM {table}"
    )
    return (int(row[0]), int(row[1])) if row else (0, 0)


def pass_counts(
    store: Store, table: str, width: int, outcomes: Sequence[tuple[str, str, str]]
) -> list[tuple[StratumKey, int, float | None]]:
    """store.samples.count_frame over the groups: a group's traces are flagged by their one
    verdict's outcome, or by any of their pairs' (bool_or); none mapped: no verdict."""
    keys = ", ".join(f"s{i}" for i in range(width))
    mapping = outcome_table(outcomes)
    rows = store.fetch_with_batch(
        "WITH m AS (SELECT judge, label, bool_or(outcome = 'unsupported') AS flagged FROM _batch "
        "WHERE outcome IN ('supported', 'unsupported') GROUP BY ALL), "
        "several AS (SELECT g, bool_or(m.flagged) AS flagged FROM (SELECT g, unnest(mpairs) AS p "
        f"FROM {table} WHERE in_frame) JOIN m ON m.judge = p.judge AND m.label = p.label "
        "GROUP BY g), "
        f"flags AS (SELECT {keys}, n, coalesce(s.flagged, m.flagged) AS flagged FROM {table} f "
        "LEFT JOIN m ON m.judge = f.vj AND m.label = f.vlab LEFT JOIN several s USING (g) "
        "WHERE f.in_frame) "
        f"SELECT {keys}, sum(n), sum(CASE WHEN flagged THEN n ELSE 0 END)::DOUBLE / "
        "nullif(sum(CASE WHEN flagged IS NOT NULL THEN n ELSE 0 END), 0)::DOUBLE "
        f"FROM flags GROUP BY {keys} ORDER BY {', '.join(f's{i} NULLS LAST' for i in range(width))}",
        mapping,
    )
    return [(tuple(row[:width]), int(row[width]), row[width + 1]) for row in rows]


def pass_ranks(
    store: Store, table: str, width: int, ranges: Sequence[tuple[StratumKey, int, int]]
) -> list[tuple[str, StratumKey, int]]:
    """store.samples.rank_frame over the groups' first keys (ranks up to the pass's depth)."""
    keys = ", ".join(f"s{i}" for i in range(width))
    cte = (
        f"frame AS (SELECT substr(k, {_HASH_HEX + 1}) AS trace_id, {keys}, left(k, {_HASH_HEX}) "
        f"AS h FROM (SELECT {keys}, unnest(keys) AS k FROM {table} WHERE in_frame))"
    )
    return rank_frame(store, cte, [], width, ranges)


def found_drawn(store: Store, table: str, drawn: Sequence[str]) -> int:
    """How many of `drawn` are among the groups' first keys (the rest: signed by the table)."""
    return int(
        store.fetch_with_batch(
            f"SELECT count(DISTINCT trace_id) FROM (SELECT substr(unnest(keys), {_HASH_HEX + 1}) "
            f"AS trace_id FROM {table} WHERE in_frame) WHERE trace_id IN "
            "(SELECT trace_id FROM _batch)",
            id_batch(drawn),
        )[0][0]
    )


def pass_signatures(store: Store, table: str, width: int, drawn: Sequence[str]) -> list[Signature]:
    """The undrawn frame traces' signatures: each group's, its traces less its drawn ones
    (every drawn trace must be among its group's keys: see found_drawn)."""
    keys = ", ".join(f"s{i}" for i in range(width))
    ctes = (
        f"drawn_n AS (SELECT g, count(*) AS d FROM (SELECT g, substr(unnest(keys), "
        f"{_HASH_HEX + 1}) AS trace_id FROM {table} WHERE in_frame) WHERE trace_id IN "
        "(SELECT trace_id FROM _batch) GROUP BY g), "
        f"undrawn AS (SELECT *, n - coalesce(d, 0) AS u FROM {table} LEFT JOIN drawn_n USING (g) "
        "WHERE in_frame AND n > coalesce(d, 0)), "
        f"verdicts AS (SELECT NULL::VARCHAR AS trace_id, {_null_keys(width)}, "
        "NULL::VARCHAR AS judge, NULL::VARCHAR AS level, NULL::VARCHAR AS claim, "
        "NULL::VARCHAR AS label, 0 AS pos, 0 AS nv WHERE false)"
    )
    grouped = (  # a one-verdict group is its own signature; a group of several, one a judge
        f" UNION ALL SELECT {keys}, judge, CASE WHEN lvl = 'response' THEN vlab END, "
        "CASE WHEN lvl = 'claim' THEN [vlab] ELSE []::VARCHAR[] END, "
        "CASE WHEN lvl = 'claim' THEN [1] ELSE []::BIGINT[] END, sum(u) FROM ("
        f"SELECT {keys}, coalesce(nullif(vj, ''), 'imported') AS judge, coalesce(nullif(vl, ''), "
        "CASE WHEN vc THEN 'claim' ELSE 'response' END) AS lvl, vlab, u FROM undrawn "
        "WHERE vlab <> '') GROUP BY ALL "
        f"UNION ALL SELECT {keys}, s.judge, s.response_label, s.claim_labels, s.claim_counts, u "
        f"FROM (SELECT {keys}, unnest(msig) AS s, u FROM undrawn WHERE msig IS NOT NULL)"
    )
    found = signatures(store, ctes, [], width, id_batch(drawn), suffix=grouped)
    return merge_signatures(found)


def _null_keys(width: int) -> str:
    return ", ".join(f"NULL::VARCHAR AS s{i}" for i in range(width))
