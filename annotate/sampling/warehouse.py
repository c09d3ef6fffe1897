"""Let the warehouse draw: the frame's counts and the drawn rows as SQL in any engine's dialect.

Both queries are built once as a sqlglot tree and generated in the asked dialect. The draw
rule is the one everywhere else: order each stratum by the lowercase hex SHA-256 of
"<seed>:<trace_id>" (UTF-8), ties by trace_id, and take the first n_h. The hex digest is
the only place the dialects differ, each written out in HEX_SHA256 below (the same bytes
in, the same 64 lowercase hex characters out).

The table (or view) NAME has trace_id, the stratum and filter columns, and a boolean
`judgeable` column (the trace has a non-blank context item: the rule of an import), since
nested context differs too much between engines to be tested in one expression. An optional
`judge_label` column (the judge's response-level label) gives the judge counts.

The rows query returns, per stratum, the first K traces in hash order, K = the most any
allocation of the spec can give one stratum; `annotate sample --from-counts --from-rows`
allocates from the counts and keeps the first n_h of each stratum, so one round trip does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlglot
from sqlglot import exp

from annotate.sampling.allocation import SampleError, SampleSpec
from annotate.sampling.drawn import most_per_stratum
from annotate.sampling.offered import DIALECTS

# The lowercase hex SHA-256 of the UTF-8 text X, per dialect (read in that dialect).
HEX_SHA256 = {
    "duckdb": "SHA256(X)",
    "spark": "SHA2(X, 256)",
    "bigquery": "TO_HEX(SHA256(X))",
    "snowflake": "SHA2(X, 256)",
    "trino": "LOWER(TO_HEX(SHA256(TO_UTF8(X))))",
    "postgres": "ENCODE(SHA256(CONVERT_TO(X, 'UTF8')), 'hex')",
}
JUDGEABLE_COLUMN = "judgeable"
JUDGE_LABEL_COLUMN = "judge_label"


def hash_expr(dialect: str, seed: int) -> Any:
    text = exp.DPipe(
        this=exp.Literal.string(f"{int(seed)}:"),
        expression=exp.cast(exp.column("trace_id"), exp.DataType.build("text")),
        safe=True,
    )
    tree = sqlglot.parse_one(HEX_SHA256[dialect], read=dialect)
    return tree.transform(
        lambda node: text.copy() if isinstance(node, exp.Column) and node.name == "X" else node
    )


def _where(spec: SampleSpec) -> Any:
    conds: list[Any] = [exp.column(JUDGEABLE_COLUMN)]
    filters = spec.filters
    for name, values in [*filters.columns.items(), *filters.attributes.items()]:
        conds.append(
            exp.cast(exp.column(name), exp.DataType.build("text")).isin(
                *[exp.Literal.string(v) for v in values]
            )
        )
    if filters.since:
        conds.append(
            exp.column("timestamp")
            >= exp.cast(
                exp.Literal.string(filters.since.isoformat(sep=" ")),
                exp.DataType.build("timestamp"),
            )
        )
    if filters.until:
        conds.append(
            exp.column("timestamp")
            < exp.cast(
                exp.Literal.string(filters.until.isoformat(sep=" ")),
                exp.DataType.build("timestamp"),
            )
        )
    if filters.judge:
        conds.append(
            exp.column(JUDGE_LABEL_COLUMN).isin(*[exp.Literal.string(v) for v in filters.judge])
        )
    return exp.and_(*conds)


def _strata(spec: SampleSpec) -> list[Any]:
    if not spec.by:
        raise SampleError("stratify by at least one column (--by), e.g. feature")
    return [
        exp.alias_(exp.cast(exp.column(name), exp.DataType.build("text")), name) for name in spec.by
    ]


def counts_query(spec: SampleSpec, table: str, dialect: str, judge_label: bool) -> str:
    """Per stratum (and judge label): how many traces the frame holds, as `traces`."""
    _check(dialect)
    keys = _strata(spec)
    if judge_label:
        keys.append(exp.alias_(exp.column(JUDGE_LABEL_COLUMN), JUDGE_LABEL_COLUMN))
    positions = [exp.Literal.number(i + 1) for i in range(len(keys))]
    query = (
        exp.select(*keys, exp.alias_(exp.Count(this=exp.Star()), "traces"))
        .from_(exp.to_table(table))
        .where(_where(spec))
        .group_by(*positions)
        .order_by(*positions)
    )
    return query.sql(dialect=dialect, pretty=True)


def rows_query(spec: SampleSpec, table: str, dialect: str) -> str:
    """Per stratum, the first K traces in hash order (every column), with sample_rank."""
    _check(dialect)
    depth = most_per_stratum(spec)
    hashed = (
        exp.select(exp.Star(), exp.alias_(hash_expr(dialect, spec.seed), "sample_hash"))
        .from_(exp.to_table(table))
        .where(_where(spec))
    )
    window = exp.Window(
        this=exp.RowNumber(),
        partition_by=[exp.column(name) for name in spec.by],
        order=exp.Order(
            expressions=[
                exp.Ordered(this=exp.column("sample_hash")),
                exp.Ordered(this=exp.column("trace_id")),
            ]
        ),
    )
    ranked = exp.select(exp.Star(), exp.alias_(window, "sample_rank")).from_(
        hashed.subquery("hashed")
    )
    query = (
        exp.select(exp.Star())
        .from_(ranked.subquery("ranked"))
        .where(exp.column("sample_rank") <= exp.Literal.number(depth))
    )
    return query.sql(dialect=dialect, pretty=True)


def _check(dialect: str) -> None:
    if dialect not in DIALECTS:
        raise SampleError(
            f"unknown --emit-sql dialect {dialect!r}; use one of: {', '.join(DIALECTS)}"
        )


def emit(spec: SampleSpec, table: str, dialect: str, judge_label: bool) -> tuple[str, str]:
    return counts_query(spec, table, dialect, judge_label), rows_query(spec, table, dialect)


__all__: Sequence[str] = ("DIALECTS", "HEX_SHA256", "emit")
