"""Import one trace file into the store: stream, validate, dedupe, insert, in one transaction.

Rows stream through in batches, so a file larger than memory never sits in Python
whole. The first occurrence of a trace_id wins; a later row with the same id and the
same content is a duplicate, with different content a conflict. Bad rows are
reported and stored; good rows land; a crash leaves nothing of the file behind. The
transaction is a bulk one (Store.transaction): DuckDB streams within half its memory limit
and gets the whole limit back for the commit; Python's cyclic collector is paused meanwhile
(annotate.ingest.collector).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, cast

from annotate.accounts.activity import Actor, as_actor, may_act, record_act
from annotate.errors import InputError, Interrupted, InterruptedAfterCommit, UsageError
from annotate.ingest import FORMATS, detect_format, input_file, read_records
from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.collector import collector_paused
from annotate.ingest.evaluations import attach_evaluations
from annotate.ingest.generic import decode_mapped, read_jsonl_traces
from annotate.ingest.mapping import (
    SourcePath,
    apply_mapping,
    missing_source,
    source_paths,
)
from annotate.ingest.mapping import parse_mapping as parse_mapping  # the CLI's, the page's
from annotate.ingest.otlp_ids import resolve_call_ids
from annotate.store import RELEASE_AFTER, Store
from annotate.store import imports as sql
from annotate.traces import (
    Record,
    RowError,
    Trace,
    parse_record,
    unexpected_error,
)

BATCH_SIZE = 2000
KEPT_ERRORS = 1000  # in the report (the store keeps every error); warnings too
# Files are read 1 MiB at a time: line by line through Python's default 8 KiB buffer, the
# lines of a 730 MB file took 0.31-0.42 s to read; through 1 MiB, 0.07 s.
READ_BUFFER = 1 << 20
Progress = Callable[[int, float], None]  # (rows read, fraction of the file read)
Check = Callable[[Trace], list[RowError]]  # a caller's own rule for a valid row (canary ids)
Item = Trace | Record | RowError  # a row read: checked already (a Trace), or not yet


@dataclass
class ImportReport:
    import_id: int
    path: str
    format: str
    imported: int = 0
    rejected: int = 0
    duplicates: int = 0
    conflicts: int = 0
    attached: int = 0  # evaluations attached to calls imported earlier (OTLP)
    errors: list[RowError] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)  # imported anyway: the first 1,000
    warned: int = 0  # every warning, kept in `warnings` or not
    # imported traces by where their context came from ("retrieval,tools"; "file": given in
    # the row; "none": no context, not judgeable)
    context_from: dict[str, int] = field(default_factory=dict)

    @property
    def is_clean(self) -> bool:
        return self.rejected == 0 and self.conflicts == 0

    def counts(self) -> dict[str, int]:
        return {
            "imported": self.imported,
            "rejected": self.rejected,
            "duplicates": self.duplicates,
            "conflicts": self.conflicts,
        }

    def as_json(self) -> dict[str, Any]:
        return {
            **self.counts(),
            "attached": self.attached,
            "context_from": dict(sorted(self.context_from.items())),
            "errors": [e.as_json() for e in self.errors],
            "warnings": [w.as_json() for w in self.warnings],
        }


def import_traces(
    store: Store,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    mapping: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    name: str | None = None,
    actor: Actor | str | None = None,
    check: Check | None = None,
    context: frozenset[str] = ALL_CONTEXT,
) -> ImportReport:
    """Import a trace file; `name` is what the report calls it (an uploaded file's name).
    `context`: the kinds of context kept where the format finds a call's context itself
    (annotate.ingest.call_context; default every kind).

    `actor` is who imports (the signed-in user; None: the OS user), recorded with the import.
    `check` may reject a parsed row with errors of its own, reported by line like any other."""
    file_path = input_file(path, name=name)
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")
    label = name or str(file_path)
    with file_path.open("rb", buffering=READ_BUFFER) as fh:
        chosen = fmt or detect_format(fh, label)
        size = max(os.fstat(fh.fileno()).st_size, 1)
        with (
            _told_if_committed(store, label) as started,
            collector_paused(),
            store.transaction(bulk=True),
        ):
            who = as_actor(actor)
            may_act(who, "import")  # before reading a row: `--as` of a reviewer is refused
            import_id = sql.start_import(store, "traces", label, chosen, who.name)
            started.append(import_id)
            report = ImportReport(import_id, label, chosen)
            records = _records(fh, chosen, context, bool(mapping))
            known = sql.KnownIds(store)
            paths = source_paths(mapping or {})
            for batch in _batches(records, fh, size, progress):
                _import_batch(store, report, batch, paths, check, known)
            known.close()
            _check_not_empty(report, label, chosen if fmt else None)
            sql.finish_import(store, report.import_id, report.counts())
            counts = {**report.counts(), "attached": report.attached}
            record_act(store, who, "import", str(import_id), file=label, **counts)
    if report.imported >= RELEASE_AFTER:  # the app lives on after a large page import
        store.release_memory()  # its memory must come back
    return report


def _records(fh: IO[bytes], fmt: str, context: frozenset[str], mapped: bool) -> Iterator[Item]:
    """The file's rows; JSON Lines without a mapping with its usual rows already Traces."""
    if fmt == "jsonl" and not mapped:
        return read_jsonl_traces(fh)
    return read_records(fh, fmt, context)


@contextmanager
def _told_if_committed(store: Store, label: str) -> Iterator[list[int]]:
    """Ctrl-C during the COMMIT, or just after it, must not say that nothing was stored when
    the import is stored whole: DuckDB may finish a commit before it sees the interrupt. The
    body appends its import id; an interrupt is then checked against the store."""
    started: list[int] = []
    try:
        yield started
    except (KeyboardInterrupt, Interrupted) as exc:
        if started and sql.import_committed(store, started[0]):
            raise stored_whole(started[0], label) from exc
        raise


def stored_whole(import_id: int, label: str) -> InterruptedAfterCommit:
    """What Ctrl-C says when it came once the import was committed."""
    return InterruptedAfterCommit(
        f"import #{import_id} ({label}) had been committed: the file is stored whole; "
        "`annotate status` shows its counts, and importing it again finds every row a duplicate"
    )


def _batches(
    records: Iterator[Item], fh: IO[bytes], size: int, progress: Progress | None
) -> Iterator[list[Item]]:
    batch: list[Item] = []
    seen = 0
    for item in records:
        batch.append(item)
        if len(batch) >= BATCH_SIZE:
            seen += len(batch)
            yield batch
            batch = []
            if progress:
                progress(seen, min(_position(fh) / size, 1.0))
    if batch:
        yield batch
    if progress:
        progress(seen + len(batch), 1.0)


def _position(fh: IO[bytes]) -> int:
    try:
        return fh.tell()
    except (OSError, ValueError):
        return 0


def _import_batch(
    store: Store,
    report: ImportReport,
    batch: Sequence[Item],
    mapping: Mapping[str, SourcePath],
    check: Check | None = None,
    known: sql.KnownIds | None = None,
) -> None:
    """Parse, check, classify and store one batch; `known` (the import's KnownIds) spares
    reading every stored trace id per batch."""
    errors: list[RowError] = []
    fresh: dict[str, Trace] = {}
    parsed: list[Trace] = []
    if report.format == "otlp":  # a call keeps its stored id; two calls never share one
        batch = resolve_call_ids(store, cast(list[Record | RowError], batch))
    notes = [i.data for i in batch if isinstance(i, Record) and i.kind == "note"]
    batch = [i for i in batch if not (isinstance(i, Record) and i.kind == "note")]
    evaluations = [i for i in batch if isinstance(i, Record) and i.kind == "evaluation"]
    _attach(store, report, evaluations, errors)
    for item in batch:
        if isinstance(item, Record) and item.kind == "evaluation":
            continue
        result = _parse(item, mapping, csv=report.format == "csv")
        if isinstance(result, Trace) and check is not None:
            result = check(result) or result
        if isinstance(result, Trace):
            parsed.append(result)
        else:
            errors.extend(result)
            report.rejected += 1
    ids = list({t.trace_id for t in parsed})
    stored = known.stored_hashes(ids) if known else sql.stored_hashes(store, ids)
    for trace in parsed:
        _classify(trace, stored, fresh, report, errors, report.import_id)
    sql.insert_traces(store, report.import_id, list(fresh.values()))
    if known:
        known.add(list(fresh))
    report.imported += len(fresh)
    for trace in fresh.values():
        origin = context_origin(trace)
        report.context_from[origin] = report.context_from.get(origin, 0) + 1
    warnings = notes + [w for trace in fresh.values() for w in trace.warnings]
    report.warned += len(warnings)
    report.warnings.extend(warnings[: max(KEPT_ERRORS - len(report.warnings), 0)])
    add_errors(store, report, errors)


def context_origin(trace: Trace) -> str:
    """Where a trace's context came from: the kinds its reader found ("retrieval,tools"),
    "file" when the row gave it, "none" when it has none."""
    if not trace.contexts:
        return "none"
    found = trace.attributes.get("context_from")
    return found if isinstance(found, str) and found else "file"


def add_errors(store: Store, report: ImportReport, errors: list[RowError]) -> None:
    """Store a batch's errors and keep the report's first KEPT_ERRORS, all by line: a reader's
    or check's own order (evaluations first, conflicts last, a turn reported once it ends)
    never shows. Sorting is stable: the errors of one line stay in the order they were found."""
    errors.sort(key=_line)
    sql.add_import_errors(store, report.import_id, errors)
    report.errors = sorted([*report.errors, *errors], key=_line)[:KEPT_ERRORS]


def _line(error: RowError) -> int:
    return error.line


def _attach(
    store: Store, report: ImportReport, evaluations: list[Record], errors: list[RowError]
) -> None:
    outcome = attach_evaluations(store, report.import_id, evaluations)
    report.attached += outcome.attached
    report.duplicates += outcome.duplicates
    report.rejected += len(outcome.errors)
    errors.extend(outcome.errors)


def _parse(
    item: Item, mapping: Mapping[str, SourcePath], csv: bool = False
) -> Trace | list[RowError]:
    if isinstance(item, Trace):  # read without a mapping and checked already
        return item
    if isinstance(item, RowError):
        return [item]
    try:
        data, missing = apply_mapping(item.data, mapping, item.columns)
        if csv and mapping:  # a CSV cell --map brings to a JSON field is decoded there
            data = decode_mapped(data, mapping)
            if isinstance(data, RowError):
                error = RowError(item.line, data.field, data.message)
                return [_mention_mapping(error, mapping)]
        record = Record(item.line, data, item.unit)
    except Exception as exc:  # a bug must cost one row, never the file
        return [unexpected_error(item, exc)]
    result = parse_record(record)
    if missing:  # the row's other errors too, but not "is required" for a field it lacks
        found = [e for e in result if e.field not in missing] if isinstance(result, list) else []
        lacking = [missing_source(item.line, item.unit, f, mapping[f]) for f in missing]
        return lacking + [_mention_mapping(error, mapping) for error in found]
    if isinstance(result, list) and mapping:
        return [_mention_mapping(error, mapping) for error in result]
    return result


def _mention_mapping(error: RowError, mapping: Mapping[str, SourcePath]) -> RowError:
    if error.field not in mapping:
        return error
    source = str(mapping[error.field])
    if error.message.startswith("is required"):  # the row has the source, with no value
        hint = f" (mapped from {source!r}, which has no value on this row)"
    else:  # the row has it, with a value that does not fit
        hint = f" (mapped from {source!r})"
    return RowError(error.line, error.field, error.message + hint, error.unit)


def _classify(
    trace: Trace,
    stored: dict[str, tuple[str, int, int]],
    fresh: dict[str, Trace],
    report: ImportReport,
    errors: list[RowError],
    import_id: int,
) -> None:
    earlier = fresh.get(trace.trace_id)
    if earlier is not None:
        first = (earlier.content_hash, import_id, earlier.line)
    else:
        first = stored.get(trace.trace_id)  # type: ignore[assignment]
    if first is None:
        fresh[trace.trace_id] = trace
    elif first[0] == trace.content_hash:
        report.duplicates += 1
    else:
        report.conflicts += 1
        errors.append(_conflict(trace, first, import_id))


def _conflict(trace: Trace, first: tuple[str, int, int], import_id: int) -> RowError:
    where = (
        f"earlier in this file (line {first[2]})"
        if first[1] == import_id
        else f"by import {first[1]} (line {first[2]} of that file)"
    )
    return RowError(
        trace.line,
        "trace_id",
        f"{trace.trace_id!r} was already imported {where} with different content; "
        "the first was kept. Give this trace a new trace_id if it is a different trace",
    )


def _check_not_empty(report: ImportReport, label: str, forced: str | None = None) -> None:
    """`forced`: the format the caller named; a file read as the wrong one may look empty."""
    total = report.imported + report.rejected + report.duplicates + report.conflicts
    total += report.attached
    if total == 0:
        hint = (
            f" when read as {forced}, the format given; leave --format out and the file's "
            "content picks its format"
            if forced
            else ": there is nothing to import"
        )
        raise InputError(f"{label} holds no rows{hint}")


def import_rows(
    store: Store,
    label: str,
    fmt: str,
    rows: Iterable[tuple[int, dict[str, Any]]],
    mapping: Mapping[str, str] | None = None,
    actor: Actor | str | None = None,
) -> ImportReport:
    """Import rows already read from `label` (e.g. by DuckDB, in place): (row number, fields).

    Validated, deduplicated and stored exactly as import_traces does; the caller holds the
    transaction. Parquet and JSON rows drop their null fields; CSV cells are read as CSV's are."""
    from annotate.ingest.generic import _csv_record, _parquet_record

    who = as_actor(actor)
    import_id = sql.start_import(store, "traces", label, fmt, who.name)
    report = ImportReport(import_id, label, fmt)
    records: list[Record | RowError] = []
    for number, row in rows:
        if fmt == "csv":
            cells = {k: v for k, v in row.items() if v is not None}
            records.append(_csv_record(cells, number, frozenset(row)))
        else:
            records.append(_parquet_record(row, number))
    paths = source_paths(mapping or {})
    for start in range(0, len(records), BATCH_SIZE):
        _import_batch(store, report, records[start : start + BATCH_SIZE], paths)
    sql.finish_import(store, report.import_id, report.counts())
    record_act(store, who, "import", str(import_id), file=label, **report.counts())
    return report
