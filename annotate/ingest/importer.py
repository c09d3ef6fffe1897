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
from pathlib import Path
from typing import IO, Any, cast

from annotate.accounts.activity import Actor, as_actor, may_act, record_act
from annotate.errors import InputError, Interrupted, InterruptedAfterCommit, UsageError
from annotate.ingest import FORMATS, detect_format, input_file, read_records, reader_process
from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.collector import collector_paused
from annotate.ingest.evaluations import attach_evaluations
from annotate.ingest.generic import read_jsonl_traces
from annotate.ingest.mapping import SourcePath, source_paths
from annotate.ingest.mapping import parse_mapping as parse_mapping  # the CLI's, the page's
from annotate.ingest.otlp_ids import resolve_call_ids
from annotate.ingest.parsed import Check, Item, Parsed, Seen, parse_items
from annotate.store import RELEASE_AFTER, Store
from annotate.store import imports as sql
from annotate.traces import Record, RowError

BATCH_SIZE = 2000
KEPT_ERRORS = 1000  # in the report (the store keeps every error); warnings too
# Files are read 1 MiB at a time: line by line through Python's default 8 KiB buffer, the
# lines of a 730 MB file took 0.31-0.42 s to read; through 1 MiB, 0.07 s.
READ_BUFFER = 1 << 20
Progress = Callable[[int, float], None]  # (rows read, fraction of the file read)


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
    readers_peak_rss: list[int] = field(default_factory=list)  # reader processes' (bytes)

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
        aside = reader_process.wanted(chosen, bool(mapping), check is not None, size)
        readers = reader_process.readers() if aside else 0  # 0: the import reads its rows
        with (
            _told_if_committed(store, label) as started,
            collector_paused(),
            store.transaction(bulk=True, beside=readers * reader_process.READER_BYTES),
        ):
            who = as_actor(actor)
            may_act(who, "import")  # before reading a row: `--as` of a reviewer is refused
            import_id = sql.start_import(store, "traces", label, chosen, who.name)
            started.append(import_id)
            report = ImportReport(import_id, label, chosen)
            known = sql.KnownIds(store)
            if readers:
                _read_aside(store, report, file_path, size, readers, known, progress)
            else:
                records = _records(fh, chosen, context, bool(mapping))
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


def _read_aside(
    store: Store,
    report: ImportReport,
    path: Path,
    size: int,
    readers: int,
    known: sql.KnownIds,
    progress: Progress | None,
) -> None:
    """Store the file's batches (`size` bytes) as `readers` reader processes read and check
    them."""
    rows = 0
    reading = reader_process.Reading(
        str(path), report.import_id, BATCH_SIZE, READ_BUFFER, readers, reader_process.PIECE
    )
    with reader_process.parsed_batches(reading) as batches:
        for parsed in batches:
            _store_parsed(store, report, parsed, known, [])
            rows += len(parsed.seen) + parsed.rejected
            if progress:
                progress(rows, min(parsed.position / size, 1.0))
        report.readers_peak_rss = batches.peaks
    if progress:
        progress(rows, 1.0)


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
    if report.format == "otlp":  # a call keeps its stored id; two calls never share one
        batch = resolve_call_ids(store, cast(list[Record | RowError], batch))
    notes = [i.data for i in batch if isinstance(i, Record) and i.kind == "note"]
    batch = [i for i in batch if not (isinstance(i, Record) and i.kind == "note")]
    evaluations = [i for i in batch if isinstance(i, Record) and i.kind == "evaluation"]
    _attach(store, report, evaluations, errors)
    rows = [i for i in batch if not (isinstance(i, Record) and i.kind == "evaluation")]
    parsed = parse_items(rows, mapping, csv=report.format == "csv", check=check)
    _store_parsed(store, report, parsed, known, errors, notes)


def _store_parsed(
    store: Store,
    report: ImportReport,
    parsed: Parsed,
    known: sql.KnownIds | None,
    errors: list[RowError],
    notes: Sequence[RowError] = (),
) -> None:
    """Classify a parsed batch's traces (fresh, duplicate, conflict) and store the fresh ones,
    the batch's errors and warnings."""
    errors.extend(parsed.errors)
    report.rejected += parsed.rejected
    ids = list({one.trace_id for one in parsed.seen})
    stored = known.stored_hashes(ids) if known else sql.stored_hashes(store, ids)
    fresh: dict[str, Seen] = {}
    kept = [
        position
        for position, one in enumerate(parsed.seen)
        if _classify(one, stored, fresh, report, errors, report.import_id)
    ]
    if kept:
        sql.insert_tables(store, parsed.tables_of(report.import_id, kept))
    if known:
        known.add(list(fresh))
    report.imported += len(fresh)
    for one in fresh.values():
        report.context_from[one.origin] = report.context_from.get(one.origin, 0) + 1
    warnings = [*notes, *(w for one in fresh.values() for w in one.warnings)]
    report.warned += len(warnings)
    report.warnings.extend(warnings[: max(KEPT_ERRORS - len(report.warnings), 0)])
    add_errors(store, report, errors)


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


def _classify(
    trace: Seen,
    stored: dict[str, tuple[str, int, int]],
    fresh: dict[str, Seen],
    report: ImportReport,
    errors: list[RowError],
    import_id: int,
) -> bool:
    """Whether the trace is fresh (the first of its id); else counted a duplicate or a
    conflict (with its error)."""
    earlier = fresh.get(trace.trace_id)
    if earlier is not None:
        first = (earlier.content_hash, import_id, earlier.line)
    else:
        first = stored.get(trace.trace_id)  # type: ignore[assignment]
    if first is None:
        fresh[trace.trace_id] = trace
        return True
    if first[0] == trace.content_hash:
        report.duplicates += 1
    else:
        report.conflicts += 1
        errors.append(_conflict(trace, first, import_id))
    return False


def _conflict(trace: Seen, first: tuple[str, int, int], import_id: int) -> RowError:
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
