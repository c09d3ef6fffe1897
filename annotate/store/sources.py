"""SQL over trace files read in place (Parquet, JSON Lines, CSV globs, hive partitions).

DuckDB scans the files lazily and out of core: the frame, its stratum counts, the
judge's counts and the seeded draw are computed where the traces live, and only the
drawn rows come back to Python. The file glob travels as a parameter; column
identifiers come from the files' own schema (DESCRIBE) and are quoted.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pyarrow as pa

from annotate.store import Store, id_batch
from annotate.store.frame_verdicts import merge_signatures, signatures
from annotate.store.samples import (
    STRATUM_COLUMNS,
    StratumKey,
    count_frame,
    rank_frame,
)

SOURCE_FORMATS = ("parquet", "jsonl", "csv")
_READERS = {
    "parquet": "read_parquet(?, hive_partitioning = true, union_by_name = true, "
    "filename = true, file_row_number = true)",
    "jsonl": "read_json(?, format = 'newline_delimited', hive_partitioning = true, "
    "union_by_name = true, filename = true)",
    "csv": "read_csv(?, hive_partitioning = true, union_by_name = true, filename = true, "
    "all_varchar = true)",
}
# The judgeable rule of annotate.traces.Trace.is_judgeable, in SQL: some context item (a
# string, or an object's text) is not blank. `context` may be a string, a list or JSON text.
_TEXT_CONTEXT_JSON = "CASE WHEN json_valid({c}) AND ltrim({c}) LIKE '[%' THEN CAST({c} AS JSON) ELSE to_json({c}) END"
# Python's str.strip() whitespace, ASCII part (DuckDB's trim() alone strips only spaces)
_BLANK = "trim({x}, chr(32) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) <> ''"
_JUDGEABLE = (
    "coalesce(CASE json_type({j}) WHEN 'VARCHAR' THEN " + _BLANK.format(x="{j} ->> '$'") + " "
    "WHEN 'ARRAY' THEN list_bool_or(["
    + _BLANK.format(
        x="coalesce(CASE json_type(e) WHEN 'VARCHAR' THEN e ->> '$' ELSE e ->> '$.text' END, '')"
    )
    + " FOR e IN json_extract({j}, '$[*]')]) END, false)"
)
# Fast paths when the files' types say what context holds (Parquet: no JSON per row)
_JUDGEABLE_STRINGS = (
    "coalesce(list_bool_or([" + _BLANK.format(x="coalesce(e, '')") + " FOR e IN {c}]), false)"
)
_JUDGEABLE_OBJECTS = (
    "coalesce(list_bool_or([" + _BLANK.format(x="coalesce(e.text, '')") + " FOR e IN {c}]), false)"
)


def struct_list_text_fields(kind: str | None) -> set[str]:
    """The VARCHAR fields of a list-of-structs DuckDB type (`STRUCT(a VARCHAR, "text" VARCHAR)[]`)."""
    if not kind or not kind.startswith("STRUCT(") or not kind.endswith(")[]"):
        return set()
    return {m.group(2) for m in re.finditer(r'(?:^|[(,]\s*)("?)(\w+)\1 VARCHAR(?=[,)])', kind[6:])}


def judgeable_expr(context: str, kind: str | None) -> str:
    """The judgeable rule for a context column of DuckDB type `kind` (None: unknown)."""
    if kind == "VARCHAR[]":
        return _JUDGEABLE_STRINGS.format(c=context)
    if "text" in struct_list_text_fields(kind):
        return _JUDGEABLE_OBJECTS.format(c=context)
    if kind == "VARCHAR":
        return _JUDGEABLE.format(j=_TEXT_CONTEXT_JSON.format(c=context))
    return _JUDGEABLE.format(j=f"to_json({context})")


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def reader(fmt: str) -> str:
    if fmt not in _READERS:
        raise ValueError(f"not a source format: {fmt}")
    return _READERS[fmt]


def source_columns(store: Store, glob: str, fmt: str) -> dict[str, str]:
    """{column: DuckDB type} of the files (hive partition keys and `filename` included)."""
    rows = store.fetchall(f"DESCRIBE SELECT * FROM {reader(fmt)}", [glob])
    return {row[0]: row[1] for row in rows}


def source_files(store: Store, glob: str) -> list[str]:
    """Every file the glob matches, sorted."""
    return [row[0] for row in store.fetchall("SELECT file FROM glob(?) ORDER BY file", [glob])]


def column_expr(columns: Collection[str], mapping: Mapping[str, str], field: str) -> str | None:
    """The SQL for a trace field: its --map source (dotted: struct fields), else its own column."""
    source = mapping.get(field)
    if source is None:
        return quote(field) if field in columns else None
    head, *rest = source.split(".")
    if head not in columns:
        return None
    return ".".join(quote(part) for part in [head, *rest])


def known_fields(
    columns: Collection[str], mapping: Mapping[str, str], names: Sequence[str]
) -> list[str]:
    """The names (stratum columns, attributes) the source has no column for."""
    return [name for name in names if column_expr(columns, mapping, name) is None]


_STRUCT_VERDICTS = (
    "verdicts AS (SELECT trace_id, v.judge AS judge, v.label AS label FROM ("
    "SELECT trace_id, unnest(judge) AS v FROM frame))"
)
_VERDICTS = (
    "verdicts AS (SELECT trace_id, v ->> '$.judge' AS judge, v ->> '$.label' AS label FROM ("
    "SELECT trace_id, unnest(json_extract(to_json(judge), '$[*]')) AS v FROM frame))"
)


def verdicts_cte(judge_kind: str | None) -> str:
    """`verdicts(trace_id, judge, label)` from the frame's judge column of DuckDB type
    `judge_kind` (a list of structs is unnested as it is; anything else goes through JSON)."""
    if {"judge", "label"} <= struct_list_text_fields(judge_kind):
        return _STRUCT_VERDICTS
    return _VERDICTS


def strata_counts(
    store: Store,
    cte: str,
    params: Sequence[Any],
    width: int,
    outcomes: Sequence[tuple[str, str, str]],
    has_judge: bool,
    judge_kind: str | None = None,
) -> list[tuple[StratumKey, int, float | None]]:
    verdicts = (
        verdicts_cte(judge_kind)
        if has_judge
        else (
            "verdicts AS (SELECT NULL::VARCHAR AS trace_id, NULL::VARCHAR AS judge, "
            "NULL::VARCHAR AS label WHERE false)"
        )
    )
    return count_frame(store, f"{cte}, {verdicts}", list(params), width, outcomes)


def struct_list_fields(kind: str | None) -> dict[str, str]:
    """{field: DuckDB type} of a list-of-structs type (top-level fields; nested ones unread)."""
    if not kind or not kind.startswith("STRUCT(") or not kind.endswith(")[]"):
        return {}
    pattern = r'(?:^|[(,]\s*)("?)(\w+)\1 (\w+)'
    return {m.group(2): m.group(3) for m in re.finditer(pattern, kind[6:])}


def _verdict_fields(judge_kind: str | None) -> tuple[str, str]:
    """(the rows each sig_frame trace's verdicts unnest from, the select over one verdict v)."""
    fields = struct_list_fields(judge_kind)
    if {"judge", "label"} <= set(fields):  # Parquet's list of structs: read as it is

        def get(name: str) -> str:
            return f"CAST(v.{quote(name)} AS VARCHAR)" if name in fields else "NULL::VARCHAR"

        items = "judge"
    else:  # anything else (JSON, a CSV cell of JSON text, one object) through JSON

        def get(name: str) -> str:
            return f"v ->> '$.{name}'"

        as_json = "CASE WHEN json_valid(judge) THEN CAST(judge AS JSON) ELSE to_json(judge) END"
        if judge_kind != "VARCHAR":
            as_json = "to_json(judge)"
        items = (
            f"CASE json_type({as_json}) WHEN 'ARRAY' THEN json_extract({as_json}, '$[*]') "
            f"WHEN 'OBJECT' THEN [{as_json}] END"
        )
    select = (
        f"{get('judge')} AS judge, {get('level')} AS level, {get('claim')} AS claim, "
        f"{get('label')} AS label"
    )
    return items, select


def file_verdicts_cte(judge_kind: str | None, width: int, name: str = "verdicts") -> str:
    """`verdicts(trace_id, s0.., judge, level, claim, label, pos, nv)` of sig_frame's `judge` column, by
    the import's rules: no judge name is "imported", no level is "claim" when a claim index
    is given, else "response"; a response-level verdict has no claim."""
    items, select = _verdict_fields(judge_kind)
    keys = "".join(f", s{i}" for i in range(width))
    return (
        f"raw_verdicts AS (SELECT trace_id{keys}, pos, nv, " + select + " FROM "
        f"(SELECT trace_id{keys}, len(items) AS nv, "
        "unnest(items) AS v, unnest(range(len(items))) AS pos FROM "
        f"(SELECT trace_id{keys}, {items} AS items FROM sig_frame))), "
        f"{name} AS (SELECT trace_id{keys}, coalesce(nullif(judge, ''), 'imported') AS judge, lvl AS level, "
        "CASE WHEN lvl = 'claim' THEN claim END AS claim, label, pos, nv FROM (SELECT *, "
        "coalesce(nullif(level, ''), CASE WHEN claim IS NOT NULL THEN 'claim' ELSE 'response' END) "
        "AS lvl FROM raw_verdicts) WHERE label IS NOT NULL AND label <> '')"
    )


def undrawn_signatures(
    store: Store,
    cte: str,
    params: Sequence[Any],
    width: int,
    judge_kind: str | None,
    drawn: Sequence[str],
) -> list[Any]:
    """The judge's verdict signatures (store.frame_verdicts) of the frame traces not drawn.
    A trace with one verdict is its own signature, grouped as it is; only the traces with
    several go through the per-trace rules (most files hold one verdict per trace)."""
    batch = id_batch(drawn)
    keys = ", ".join(f"s{i}" for i in range(width))
    ctes = (
        f"{cte}, sig_frame AS (SELECT * FROM frame WHERE trace_id NOT IN "
        f"(SELECT trace_id FROM _batch)), {file_verdicts_cte(judge_kind, width, 'all_verdicts')}, "
        "verdicts AS (SELECT * FROM all_verdicts WHERE nv > 1)"
    )
    single = (
        f" UNION ALL SELECT {keys}, judge, CASE WHEN level = 'response' THEN label END, "
        "CASE WHEN level = 'claim' THEN [label] ELSE []::VARCHAR[] END, "
        "CASE WHEN level = 'claim' THEN [1] ELSE []::BIGINT[] END, count(*) "
        "FROM all_verdicts WHERE nv = 1 GROUP BY ALL"
    )
    return merge_signatures(signatures(store, ctes, params, width, batch, suffix=single))


def draw_ranks(
    store: Store,
    cte: str,
    params: Sequence[Any],
    width: int,
    ranges: Sequence[tuple[StratumKey, int, int]],
) -> list[tuple[str, StratumKey, int]]:
    return rank_frame(store, cte, list(params), width, ranges)


def drawn_rows(
    store: Store, glob: str, fmt: str, trace_ids: Sequence[str], id_expr: str
) -> pa.Table:
    """The drawn traces' rows as the files hold them, with `filename` (and row for Parquet)."""
    wanted = id_batch(trace_ids)
    return store.fetch_arrow_with_batch(
        f"SELECT * FROM {reader(fmt)} WHERE CAST({id_expr} AS VARCHAR) IN "
        "(SELECT trace_id FROM _batch)",
        wanted,
        [glob],
    )


__all__ = ["STRATUM_COLUMNS", "SOURCE_FORMATS"]
