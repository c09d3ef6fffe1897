"""Record a sample a warehouse drew (annotate sample --emit-sql, then --from-counts and
--from-rows): N_h and the judge_label counts from the counts query's CSV, the drawn traces
from the rows query's Parquet, read as a source and kept by the same rule.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from annotate.accounts.activity import Actor, as_actor
from annotate.sampling.allocation import SampleError, SampleSpec
from annotate.sampling.drawn import Plan, check_name_free, excluded_counts
from annotate.sampling.sources import (
    WAREHOUSE_JUDGE,
    Source,
    SourceFrame,
    _plan_strata,
    _record_draw,
)
from annotate.store import Store
from annotate.store.frame_verdicts import Signature
from annotate.store.samples import stratum_key_text


def read_counts(
    path: str, by: Sequence[str]
) -> tuple[list[tuple[Any, int, float | None]], list[tuple[Any, str, str, int]] | None]:
    """The counts query's result as CSV: (stratum values, N_h, None) and judge label counts
    (None: no judge_label column).

    An empty cell is a missing value (warehouses export NULL so)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as exc:
        raise SampleError(f"cannot read --from-counts {path}: {exc.strerror}") from None
    header = list(rows[0]) if rows else []
    missing = [name for name in [*by, "traces"] if name not in header]
    if missing:
        raise SampleError(
            f"{path} has no column {missing[0]!r} (its columns: {', '.join(header)}); "
            "give the --by the counts query was emitted with"
        )
    totals: dict[tuple[Any, ...], int] = defaultdict(int)
    labels: list[tuple[Any, str, str, int]] | None = [] if "judge_label" in header else None
    for number, row in enumerate(rows, start=2):
        key = tuple(row[name] or None for name in by)
        try:
            traces = int(row["traces"])
        except ValueError:
            raise SampleError(
                f"{path}, line {number}: traces must be a whole number, got {row['traces']!r}"
            ) from None
        totals[key] += traces
        if labels is not None and row.get("judge_label"):
            labels.append((key, "", row["judge_label"], traces))
    order = sorted(totals, key=lambda key: [(v is None, v or "") for v in key])
    return [(key, totals[key], None) for key in order], labels


def draw_from_results(
    store: Store,
    spec: SampleSpec,
    counts_path: str,
    rows_path: str,
    created_by: Actor | str | None = None,
    judge: str = "",
) -> Plan:
    """Record a sample the warehouse drew (annotate sample --emit-sql): N_h from the counts
    query's CSV, the traces from the rows query's Parquet, kept by the same rule. `judge`
    names the judge of the judge_label column (default: WAREHOUSE_JUDGE)."""
    judge = judge or WAREHOUSE_JUDGE
    who = as_actor(created_by)
    source = Source(rows_path, "parquet", {}, counts_path)
    with store.transaction():
        check_name_free(store, spec.name)
        counts, label_counts = read_counts(counts_path, spec.by)
        frame_size = sum(population for _, population, _ in counts)
        if frame_size == 0:
            raise SampleError(f"{counts_path} counts no traces: the frame is empty")
        strata = _plan_strata(spec, counts)
        plan = Plan(spec, frame_size, excluded_counts(0, 0), strata, 0)
        frame = SourceFrame(store, source, spec)
        frame.warehouse_judge = judge if label_counts is not None else None
        ranges = [(s.values, 0, s.sample) for s in strata]
        units = frame.ranks(ranges)
        short = [
            s for s in strata if sum(1 for u in units if tuple(u[1]) == tuple(s.values)) < s.sample
        ]
        if short:
            raise SampleError(
                f"{rows_path} holds fewer rows than the sample needs in stratum "
                f"{list(short[0].values)}; run the rows query emitted with the same spec"
            )
        _record_draw(
            store, frame, plan, ranges, units, who, source.as_json(),
            lambda drawn: _undrawn_labels(
                label_counts or [], frame.drawn_labels, units, counts_path, judge
            ),
        )  # fmt: skip
        frame.close()  # the frame's temporary table (a failure's rollback drops it)
    return plan


def _undrawn_labels(
    label_counts: Sequence[tuple[Any, str, str, int]],
    drawn_labels: Mapping[str, str | None],
    units: Sequence[tuple[str, Any, int]],
    counts_path: str,
    judge: str,
) -> list[Signature]:
    """The counts query's judge_label counts less the drawn rows' own, as response-level
    signatures of the judge of the judge_label column."""
    left: dict[tuple[str, str], int] = defaultdict(int)
    for key, _, label, traces in label_counts:
        left[(stratum_key_text(key), label)] += traces
    for trace_id, key, _ in units:
        drawn = drawn_labels.get(trace_id)
        if drawn:
            left[(stratum_key_text(key), drawn)] -= 1
    short = [(key, label) for (key, label), n in left.items() if n < 0]
    if short:
        raise SampleError(
            f"{counts_path} counts fewer traces with judge_label {short[0][1]!r} in stratum "
            f"{short[0][0]} than the drawn rows hold; run both queries over the same table"
        )
    return [(key, judge, label, (), (), n) for (key, label), n in sorted(left.items()) if n]
