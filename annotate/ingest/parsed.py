"""A batch of an import's rows, read and checked: the traces, the rows refused and what the
store's side of the import needs of each trace to tell it fresh, a duplicate or a conflict.

Pure (no store): the import's reader process (annotate.ingest.reader_process) makes these
beside the inserts, with the traces already built into the insert's tables; an import that
reads its rows itself makes them with the traces as they are."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from annotate.ingest.generic import decode_mapped
from annotate.ingest.mapping import SourcePath, apply_mapping, missing_source
from annotate.traces import Record, RowError, Trace, parse_record, unexpected_error
from annotate.traces.tables import TraceTables, trace_tables

Check = Callable[[Trace], list[RowError]]  # a caller's own rule for a valid row (canary ids)
Item = Trace | Record | RowError  # a row read: checked already (a Trace), or not yet


class Seen(NamedTuple):
    """What deduplication and the report need of a parsed trace."""

    trace_id: str
    content_hash: str
    line: int
    origin: str  # context_origin
    warnings: tuple[RowError, ...]


@dataclass
class Parsed:
    """A batch's rows, read and checked: `seen` and `traces` (or `tables`) in the same order."""

    seen: list[Seen]
    errors: list[RowError]  # the refused rows' errors
    rejected: int
    traces: list[Trace] | None = None  # read here; or, from a reader process:
    tables: TraceTables | None = None
    position: int = 0  # the reader's position in the file after the batch, in bytes

    def tables_of(self, import_id: int, positions: Sequence[int]) -> TraceTables:
        """The insert's tables of the traces at `positions` (ascending)."""
        if self.tables is not None:
            return self.tables.select(positions)
        assert self.traces is not None
        return trace_tables(import_id, [self.traces[i] for i in positions])

    def built(self, import_id: int, first: int = 0) -> Parsed:
        """The same batch with its traces as the insert's tables (a reader process's);
        `first`: the batch position of its first trace, when it is a part of a batch."""
        tables = trace_tables(import_id, self.traces or [], first)
        return Parsed(self.seen, self.errors, self.rejected, None, tables, self.position)

    @staticmethod
    def joined(parts: Sequence[Parsed]) -> Parsed:
        """Consecutive parts of a batch, each built, as one batch."""
        return Parsed(
            [one for part in parts for one in part.seen],
            [error for part in parts for error in part.errors],
            sum(part.rejected for part in parts),
            None,
            TraceTables.joined([part.tables for part in parts if part.tables is not None]),
            parts[-1].position,
        )


def parse_items(
    items: Sequence[Item],
    mapping: Mapping[str, SourcePath],
    csv: bool = False,
    check: Check | None = None,
) -> Parsed:
    """Parse and check a batch's rows (none an evaluation or a note)."""
    traces: list[Trace] = []
    errors: list[RowError] = []
    rejected = 0
    for item in items:
        result = _parse(item, mapping, csv=csv)
        if isinstance(result, Trace) and check is not None:
            result = check(result) or result
        if isinstance(result, Trace):
            traces.append(result)
        else:
            errors.extend(result)
            rejected += 1
    return Parsed([_seen(t) for t in traces], errors, rejected, traces)


def _seen(trace: Trace) -> Seen:
    return Seen(
        trace.trace_id, trace.content_hash, trace.line, context_origin(trace), trace.warnings
    )


def context_origin(trace: Trace) -> str:
    """Where a trace's context came from: the kinds its reader found ("retrieval,tools"),
    "file" when the row gave it, "none" when it has none."""
    if not trace.contexts:
        return "none"
    found = trace.attributes.get("context_from")
    return found if isinstance(found, str) and found else "file"


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
