"""Sample where the traces live: draw from Parquet / JSON Lines / CSV files read in place.

DuckDB computes the frame (the judgeable rows that match the filters, as for imported
traces), its stratum counts and the judge's verdict counts over the files; allocation is
the same as for an imported frame; the draw is the same rule (sha256 of "<seed>:<trace_id>",
ascending, top-k per stratum), so the same files imported then sampled give the same
trace ids. Only the drawn rows are read into Python and imported, validated exactly as
`annotate import` validates; a drawn row that fails is reported by file and row and nothing
is stored. Trace ids are assumed unique in the source (a sample needs unique units).
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.errors import InputError
from annotate.ingest.importer import import_rows
from annotate.sampling.allocation import SampleError, SampleSpec, StratumPlan
from annotate.sampling.samples import (
    Plan,
    _check_columns_have_values,
    _sample_record,
    _sizes,
    _store_draw,
    judge_outcomes,
)
from annotate.store import Store
from annotate.store import samples as sample_sql
from annotate.store import sources as sql

SOURCE_FORMATS = sql.SOURCE_FORMATS
_SUFFIXES = {
    ".parquet": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
}


@dataclass(frozen=True)
class Source:
    path: str  # a file or a glob (`lake/traces/**/*.parquet`); hive partitions are columns
    format: str
    mapping: Mapping[str, str] = field(default_factory=dict)
    counts: str | None = None  # --from-counts: the frame's counts came from the warehouse

    def as_json(self) -> dict[str, Any]:
        data = {"path": self.path, "format": self.format, "map": dict(self.mapping)}
        return {**data, "counts": self.counts} if self.counts else data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Source:
        return cls(data["path"], data["format"], dict(data.get("map") or {}), data.get("counts"))


def make_source(path: str, fmt: str | None, mapping: Mapping[str, str]) -> Source:
    if fmt is None:
        fmt = _SUFFIXES.get(Path(path.rstrip("*")).suffix.lower())
        if fmt is None:
            raise SampleError(
                f"cannot tell the format of {path}; pass --source-format {'|'.join(SOURCE_FORMATS)}"
            )
    if fmt not in SOURCE_FORMATS:
        raise SampleError(
            f"unknown --source-format {fmt!r}; use one of: {', '.join(SOURCE_FORMATS)}"
        )
    return Source(path, fmt, dict(mapping))


# what the emitted rows query adds to a trace's columns (annotate.sampling.warehouse)
_READER_COLUMNS = ("filename", "file_row_number")  # added by the reader, not the files'
_WAREHOUSE_COLUMNS = ("sample_hash", "sample_rank", "judgeable", "judge_label")


class SourceFrame:
    """A sample's frame over files read in place: counts and ranks computed by DuckDB."""

    def __init__(self, store: Store, source: Source, spec: SampleSpec) -> None:
        self.store, self.source, self.spec = store, source, spec
        self.files = sql.source_files(store, source.path)
        if not self.files:
            raise SampleError(f"--source {source.path} matches no file")
        try:
            self.columns = sql.source_columns(store, source.path, source.format)
        except Exception as exc:  # a file DuckDB cannot read: say which and why
            raise InputError(f"cannot read {source.path} as {source.format}: {exc}") from None
        missing = sql.known_fields(self.columns, source.mapping, ["trace_id", "context"])
        if missing:
            raise SampleError(
                f"the source has no {' or '.join(missing)} column; its columns are "
                f"{', '.join(c for c in self.columns if c not in _READER_COLUMNS)}; map one with --map FIELD=SOURCE"
            )
        names = [*spec.by, *spec.filters.columns, *spec.filters.attributes]
        unknown = sql.known_fields(self.columns, source.mapping, names)
        if unknown:
            raise SampleError(
                f"unknown column {unknown[0]!r} in the source; use one of: "
                f"{', '.join(c for c in self.columns if c not in _READER_COLUMNS)} (or --map {unknown[0]}=COLUMN)"
            )
        self.has_judge = sql.column_expr(self.columns, source.mapping, "judge") is not None
        self.judge_kind = self.columns.get(source.mapping.get("judge", "judge"))

    def _cte(self, seed: int | None = None) -> tuple[str, list[Any]]:
        spec, source = self.spec, self.source
        return sql.frame_cte(
            source.path, source.format, self.columns, source.mapping, spec.filters, spec.by, seed
        )

    def strata(
        self, outcomes: Sequence[tuple[str, str, str]]
    ) -> tuple[list[tuple[Any, int, float | None]], int, dict[str, int]]:
        cte, params = self._cte()
        counts = sql.strata_counts(
            self.store, cte, params, len(self.spec.by), outcomes, self.has_judge, self.judge_kind
        )
        total, judgeable = sql.totals(self.store, cte, params)
        frame_size = sum(population for _, population, _ in counts)
        if frame_size == 0:
            raise SampleError(
                f"the frame is empty: none of the {judgeable} judgeable traces (of {total}) in "
                f"{self.source.path} match the filters; widen or drop --where"
            )
        _check_columns_have_values(self.spec, counts)
        excluded = {"no_context": total - judgeable, "filtered_out": judgeable - frame_size}
        return counts, frame_size, excluded

    def judge_counts(self) -> list[tuple[Any, str, str, int]]:
        if not self.has_judge:
            return []
        cte, params = self._cte()
        return sql.judge_counts(self.store, cte, params, len(self.spec.by), self.judge_kind)

    def ranks(self, ranges: list[tuple[Any, int, int]]) -> list[tuple[str, Any, int]]:
        cte, params = self._cte(self.spec.seed)
        return sql.draw_ranks(self.store, cte, params, len(self.spec.by), ranges)

    def import_drawn(self, units: Sequence[tuple[str, Any, int]], who: Actor) -> int:
        """Import the drawn rows, one import per file; any bad row: InputError, nothing kept."""
        source = self.source
        id_expr = sql.column_expr(self.columns, source.mapping, "trace_id") or "trace_id"
        table = sql.drawn_rows(
            self.store, source.path, source.format, [u[0] for u in units], id_expr
        )
        id_column = source.mapping.get("trace_id", "trace_id")
        by_file: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for row in table.to_pylist():
            for extra in _WAREHOUSE_COLUMNS if source.counts else ():
                row.pop(extra, None)
            name = row.pop("filename")
            number = row.pop("file_row_number", None)
            by_file[name].append((number + 1 if number is not None else 0, row))
        problems: list[str] = []
        imported = 0
        for name in sorted(by_file):
            rows = sorted(by_file[name], key=lambda item: item[0])
            if source.format != "parquet":  # numbered here; the file's own line found on error
                rows = [(index, row) for index, (_, row) in enumerate(rows, start=1)]
            report = import_rows(self.store, name, source.format, rows, source.mapping, who)
            imported += report.imported
            lines: dict[int, int] = {}
            if report.errors and source.format != "parquet":
                ids = {index: str(row.get(id_column)) for index, row in rows}
                lines = _file_lines(name, source.format, id_column, ids)
            for error in report.errors:
                line = lines.get(error.line, error.line)
                unit = "row" if source.format == "parquet" else "line"
                problems.append(f"{name}, {unit} {line}: {error.field or 'row'}: {error.message}")
        if problems:
            shown = "\n  ".join(problems[:20])
            more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
            raise InputError(
                f"{len(problems)} drawn trace(s) in {source.path} are not valid traces; fix "
                f"them in the files (or exclude them with --where) and sample again. Nothing "
                f"was stored:\n  {shown}{more}"
            )
        return imported


def _file_lines(path: str, fmt: str, id_column: str, ids: Mapping[int, str]) -> dict[int, int]:
    """{our row number: the file's line} for JSON Lines and CSV rows, found by trace id.
    Only on the error path: a scan of the one file that holds a bad drawn row."""
    wanted = {trace_id: index for index, trace_id in ids.items()}
    found: dict[int, int] = {}
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        if fmt == "csv":
            reader = csv.DictReader(fh)
            for row in reader:
                index = wanted.get(str(row.get(id_column)))
                if index is not None:
                    found.setdefault(index, reader.line_num)
            return found
        for number, line in enumerate(fh, start=1):
            if not any(trace_id in line for trace_id in wanted):
                continue
            try:
                data = json.loads(line)
            except ValueError:
                continue
            index = wanted.get(str(data.get(id_column))) if isinstance(data, dict) else None
            if index is not None:
                found.setdefault(index, number)
    return found


def draw_from_source(
    store: Store,
    spec: SampleSpec,
    source: Source,
    created_by: Actor | str | None = None,
    plan_only: bool = False,
) -> Plan:
    """Plan and draw a named sample from files in place; import only the drawn traces."""
    who = as_actor(created_by)
    if not spec.name.strip():
        raise SampleError("give the sample a --name")
    if not spec.by:
        raise SampleError("stratify by at least one column (--by), e.g. feature")
    with store.transaction():
        if not plan_only and sample_sql.sample_row(store, spec.name) is not None:
            raise SampleError(
                f"a sample named {spec.name!r} exists; pick another --name, or --top-up that sample"
            )
        frame = SourceFrame(store, source, spec)
        counts, frame_size, excluded = frame.strata(judge_outcomes(store))
        strata = _plan_strata(spec, counts)
        plan = Plan(spec, frame_size, excluded, strata, 0)
        if plan_only:
            return plan
        ranges = [(s.values, 0, s.sample) for s in strata]
        units = frame.ranks(ranges)
        record = {**source.as_json(), "files": len(frame.files)}
        _record_draw(store, frame, plan, ranges, units, who, record, frame.judge_counts())
    return plan


def read_counts(
    path: str, by: Sequence[str]
) -> tuple[list[tuple[Any, int, float | None]], list[tuple[Any, str, str, int]]]:
    """The counts query's result as CSV: (stratum values, N_h, None) and judge label counts.

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
    labels: list[tuple[Any, str, str, int]] = []
    for number, row in enumerate(rows, start=2):
        key = tuple(row[name] or None for name in by)
        try:
            traces = int(row["traces"])
        except ValueError:
            raise SampleError(
                f"{path}, line {number}: traces must be a whole number, got {row['traces']!r}"
            ) from None
        totals[key] += traces
        if row.get("judge_label"):
            labels.append((key, "", row["judge_label"], traces))
    order = sorted(totals, key=lambda key: [(v is None, v or "") for v in key])
    return [(key, totals[key], None) for key in order], labels


def draw_from_results(
    store: Store,
    spec: SampleSpec,
    counts_path: str,
    rows_path: str,
    created_by: Actor | str | None = None,
) -> Plan:
    """Record a sample the warehouse drew (annotate sample --emit-sql): N_h from the counts
    query's CSV, the traces from the rows query's Parquet, kept by the same rule."""
    who = as_actor(created_by)
    source = Source(rows_path, "parquet", {}, counts_path)
    with store.transaction():
        if sample_sql.sample_row(store, spec.name) is not None:
            raise SampleError(f"a sample named {spec.name!r} exists; pick another --name")
        counts, label_counts = read_counts(counts_path, spec.by)
        frame_size = sum(population for _, population, _ in counts)
        if frame_size == 0:
            raise SampleError(f"{counts_path} counts no traces: the frame is empty")
        strata = _plan_strata(spec, counts)
        plan = Plan(spec, frame_size, {"no_context": 0, "filtered_out": 0}, strata, 0)
        frame = SourceFrame(store, source, spec)
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
        _record_draw(store, frame, plan, ranges, units, who, source.as_json(), label_counts)
    return plan


def _plan_strata(spec: SampleSpec, counts: list[Any]) -> list[StratumPlan]:
    """One StratumPlan per (key, N_h, judge rate) row, sized by the spec's allocation."""
    sizes = _sizes(spec, counts)
    return [
        StratumPlan(key, population, size, rate)
        for (key, population, rate), size in zip(counts, sizes, strict=True)
    ]


def _record_draw(
    store: Store,
    frame: SourceFrame,
    plan: Plan,
    ranges: list[tuple[Any, int, int]],
    units: list[Any],
    who: Actor,
    source: dict[str, Any],
    label_counts: Any,
) -> None:
    """Import the drawn traces and record the sample, its units, judge counts and the act."""
    frame.import_drawn(units, who)
    plan.max_import_id = sample_sql.max_import_id(store)
    sample_sql.insert_sample(store, _sample_record(plan, who.name, source))
    _store_draw(store, plan, ranges, who.name, lambda _ranges: units)
    sample_sql.add_judge_counts(store, plan.spec.name, label_counts)
    record_act(
        store,
        who,
        "sample",
        plan.spec.name,
        traces=len(plan.trace_ids),
        seed=plan.spec.seed,
        source=source["path"],
    )
