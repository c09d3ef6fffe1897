"""Sample where the traces live: draw from Parquet / JSON Lines / CSV files read in place.

DuckDB computes the frame (the judgeable rows that match the filters, as for imported
traces) in one aggregate pass over the files (annotate.store.source_pass): the rows grouped
by stratum and the judge's verdict signature, each group with its count and first draw
keys; its stratum counts, the judge's verdict counts, the draw and the undrawn traces'
signatures read those groups (a judge column that is not a list of structs goes through a
per-row table, annotate.store.source_frame); allocation is the same as for an imported frame; the draw is the same rule (sha256 of "<seed>:<trace_id>",
ascending, top-k per stratum), so the same files imported then sampled give the same
trace ids. Only the drawn rows are read into Python and imported, validated exactly as
`annotate import` validates; a drawn row that fails is reported by file and row and nothing
is stored. Trace ids are assumed unique in the source (a sample needs unique units).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.errors import InputError, StoreError
from annotate.ingest.importer import import_rows
from annotate.sampling.allocation import SampleError, SampleSpec, StratumPlan
from annotate.sampling.drawn import (
    Plan,
    _check_columns_have_values,
    _sample_record,
    _sizes,
    _store_draw,
    check_name_free,
    check_spec_shape,
    excluded_counts,
    judge_outcomes,
    most_per_stratum,
)
from annotate.sampling.source_lines import file_lines
from annotate.store import Store, open_store
from annotate.store import samples as sample_sql
from annotate.store import source_frame as frame_sql
from annotate.store import source_pass as pass_sql
from annotate.store import sources as sql
from annotate.store.frame_verdicts import Signature, add_signatures

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


def matched_files(path: str, flag: str = "--source", store: Store | None = None) -> list[str]:
    """The files `path` (a file or a glob) matches, sorted; none is a usage error naming `flag`.
    Without `store`, listed by a scratch in-memory store: the check before the store is
    opened, so that a typo does not create one."""
    if store is None:
        scratch = open_store(":memory:")
        try:
            return matched_files(path, flag, scratch)
        finally:
            scratch.close()
    files = sql.source_files(store, path)
    if not files:
        raise SampleError(f"{flag} {path} matches no file")
    return files


# what the emitted rows query adds to a trace's columns (annotate.sampling.warehouse)
_READER_COLUMNS = ("filename", "file_row_number")  # added by the reader, not the files'
_WAREHOUSE_COLUMNS = ("sample_hash", "sample_rank", "judgeable", "judge_label")
# The judge of a warehouse's judge_label column: the name `annotate import` gives a verdict
# that names no judge. A drawn row's judge_label becomes its response-level verdict.
WAREHOUSE_JUDGE = "imported"
_FRAMES = itertools.count(1)  # temporary table names, distinct per process
# The most first keys the pass keeps a group (each in DuckDB's aggregate state, which does not
# spill): a deeper draw, far beyond what reviewers label, reads the per-row table instead.
MOST_KEPT = 50_000


class SourceFrame:
    """A sample's frame over files read in place: counts and ranks computed by DuckDB."""

    def __init__(
        self, store: Store, source: Source, spec: SampleSpec, depth: int | None = None
    ) -> None:
        """`depth`: the most traces a stratum will be drawn (the pass keeps that many first
        keys per group; a deeper draw reads the files again)."""
        self.store, self.source, self.spec = store, source, spec
        self.depth = max(1, depth or 0)
        self.files = matched_files(
            source.path, "--from-rows" if source.counts else "--source", store
        )
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
        self.drawn_labels: dict[str, str | None] = {}  # trace -> judge_label (--from-rows)
        # whose verdict judge_label is (--from-rows; None: the counts have no judge_label)
        self.warehouse_judge: str | None = None
        self.rows = frame_sql.FileRows(
            source.path, source.format, self.columns, source.mapping, spec.filters, spec.by
        )  # what each pass over the files reads
        self.judge_kind = self.rows.kind_of("judge")
        self.table: str | None = None  # the frame's temporary table, once made
        # one aggregate pass (issue 38) unless the judge column needs the per-row table
        self.groups: str | None = None
        self.grouped = (
            not source.counts
            and pass_sql.has_pass(self.judge_kind, self.has_judge)
            and self.depth <= MOST_KEPT
        )

    def _table(self) -> str:
        """The frame's temporary table, made by the first question asked of it: the files are
        read once per SourceFrame (issue 38: four scans were 94% of a sample's time)."""
        if self.table is None:
            select, params = frame_sql.frame_select(self.rows, self.spec.seed)
            name = f"source_frame_{next(_FRAMES)}"
            frame_sql.create_frame(self.store, name, select, params)
            self.table = name
        return self.table

    def _groups(self, depth: int) -> str:
        """The pass's groups, keeping `depth` first keys per group (made again if deeper)."""
        if self.groups is None or depth > self.depth:
            self.depth = max(self.depth, depth)
            select, params = pass_sql.pass_select(self.rows, self.spec.seed, self.depth)
            self.groups = self.groups or f"source_groups_{next(_FRAMES)}"
            pass_sql.create_pass(self.store, self.groups, select, params)
        return self.groups

    def close(self) -> None:
        """Drop the frame's tables (a rolled-back transaction has dropped them already)."""
        for table in (self.table, self.groups):
            if table is not None:
                with suppress(StoreError):
                    frame_sql.drop_frame(self.store, table)
        self.table = self.groups = None

    def strata(
        self, outcomes: Sequence[tuple[str, str, str]]
    ) -> tuple[list[tuple[Any, int, float | None]], int, dict[str, int]]:
        counts, (total, judgeable) = self._counts(outcomes)
        frame_size = sum(population for _, population, _ in counts)
        if frame_size == 0:
            raise SampleError(
                f"the frame is empty: none of the {judgeable} judgeable traces (of {total}) in "
                f"{self.source.path} match the filters; widen or drop --where"
            )
        _check_columns_have_values(self.spec, counts)
        return counts, frame_size, excluded_counts(total - judgeable, judgeable - frame_size)

    def _counts(
        self, outcomes: Sequence[tuple[str, str, str]]
    ) -> tuple[list[tuple[Any, int, float | None]], tuple[int, int]]:
        """(stratum, N_h, judge rate) rows, and (rows with a trace id, judgeable rows)."""
        width = len(self.spec.by)
        if self.grouped:
            groups = self._groups(self.depth)
            counts = pass_sql.pass_counts(self.store, groups, width, outcomes)
            return counts, pass_sql.pass_totals(self.store, groups)
        table = self._table()
        if frame_sql.is_flat(self.judge_kind):
            counts = frame_sql.flat_counts(self.store, table, width, outcomes)
        else:
            cte = frame_sql.frame_cte(table, width)
            counts = sql.strata_counts(
                self.store, cte, [], width, outcomes, self.has_judge, self.judge_kind
            )
        return counts, frame_sql.totals(self.store, table)

    def undrawn_signatures(self, drawn: Sequence[str]) -> list[Signature]:
        """The judge's verdicts of the frame traces not in `drawn` (store.frame_verdicts).
        From the pass's groups when every drawn trace is among their first keys (a draw
        from the files as they were read); else from the per-row table."""
        if not self.has_judge:
            return []
        width = len(self.spec.by)
        if self.grouped:
            groups = self._groups(self.depth)
            if pass_sql.found_drawn(self.store, groups, drawn) == len(set(drawn)):
                return pass_sql.pass_signatures(self.store, groups, width, drawn)
        table = self._table()
        if frame_sql.is_flat(self.judge_kind):
            return frame_sql.flat_signatures(self.store, table, width, self.judge_kind, drawn)
        cte = frame_sql.frame_cte(table, width)
        return sql.undrawn_signatures(self.store, cte, [], width, self.judge_kind, drawn)

    def ranks(self, ranges: list[tuple[Any, int, int]]) -> list[tuple[str, Any, int]]:
        """The drawn (trace, key, rank) of `ranges`: from the groups' first keys (read again
        when a range reaches deeper), or the table's candidates (only they hashed in full)."""
        width = len(self.spec.by)
        deepest = max((hi for _, _, hi in ranges), default=0)
        self.grouped = self.grouped and deepest <= MOST_KEPT  # the counts stay the pass's
        if self.grouped:
            groups = self._groups(deepest)
            return pass_sql.pass_ranks(self.store, groups, width, ranges)
        cte, params = frame_sql.candidates_cte(self._table(), width, deepest, self.spec.seed)
        return sql.draw_ranks(self.store, cte, params, width, ranges)

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
            judge = self.warehouse_judge if source.counts else None
            label = row.get("judge_label") if judge else None
            for extra in _WAREHOUSE_COLUMNS if source.counts else ():
                row.pop(extra, None)
            if judge and label:
                row["judge"] = _with_label(row.get("judge"), judge, label)
            self.drawn_labels[str(row.get(id_column))] = label
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
                lines = file_lines(name, source.format, id_column, ids)
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


def _with_label(verdicts: Any, judge: str, label: str) -> Any:
    """A drawn row's verdicts with its judge_label as `judge`'s response-level verdict, unless
    the row already holds one (a table with both columns: the judge column wins)."""
    listed = [verdicts] if isinstance(verdicts, Mapping) else list(verdicts or [])
    for item in listed:
        if (
            isinstance(item, Mapping)
            and (item.get("judge") or "imported") == judge
            and (item.get("level") or ("claim" if item.get("claim") is not None else "response"))
            == "response"
        ):
            return verdicts
    return [*listed, {"judge": judge, "level": "response", "label": label}]


def draw_from_source(
    store: Store,
    spec: SampleSpec,
    source: Source,
    created_by: Actor | str | None = None,
    plan_only: bool = False,
) -> Plan:
    """Plan and draw a named sample from files in place; import only the drawn traces."""
    who = as_actor(created_by)
    check_spec_shape(spec)
    with store.transaction():
        if not plan_only:
            check_name_free(store, spec.name)
        frame = SourceFrame(store, source, spec, _deepest(spec))
        try:
            counts, frame_size, excluded = frame.strata(judge_outcomes(store))
            strata = _plan_strata(spec, counts)
            plan = Plan(spec, frame_size, excluded, strata, 0)
            if plan_only:
                return plan
            ranges = [(s.values, 0, s.sample) for s in strata]
            units = frame.ranks(ranges)
            record = {**source.as_json(), "files": len(frame.files)}
            _record_draw(store, frame, plan, ranges, units, who, record, frame.undrawn_signatures)
        finally:
            frame.close()
    return plan


def _deepest(spec: SampleSpec) -> int | None:
    """The most one stratum can be drawn (the warehouse rows query's K); None when the spec
    cannot say (its error comes from the allocation, after the frame's own checks)."""
    with suppress(SampleError):
        return most_per_stratum(spec)
    return None


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
    undrawn: Callable[[Sequence[str]], list[Signature]],
) -> None:
    """Import the drawn traces and record the sample, its units, the judge's verdicts over
    the undrawn frame traces, and the act."""
    frame.import_drawn(units, who)
    plan.max_import_id = sample_sql.max_import_id(store)
    sample_sql.insert_sample(store, _sample_record(plan, who.name, source))
    _store_draw(store, plan, ranges, who.name, lambda _ranges: units)
    add_signatures(store, plan.spec.name, undrawn([u[0] for u in units]))
    record_act(
        store,
        who,
        "sample",
        plan.spec.name,
        traces=len(plan.trace_ids),
        seed=plan.spec.seed,
        source=source["path"],
    )
