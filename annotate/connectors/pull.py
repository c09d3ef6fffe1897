"""`annotate import --from phoenix|mlflow`: a server's traces into the store, a page at a time.

Each page of new traces (those the store has not pulled from this server before, by the tool's
trace id) is fetched whole and imported by the importer, through the same readers and
conventions as a file of the tool's export; the traces pulled are then recorded, so a rerun
fetches only what is new and a pull cut short resumes where it stopped. Bad spans are
reported by the tool's trace id; the good calls of the page are kept.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from annotate.accounts.activity import Actor
from annotate.connectors.server import Listed, Server, talking_to
from annotate.errors import InputError
from annotate.ingest.call_context import ALL_CONTEXT
from annotate.ingest.importer import ImportReport, import_traces
from annotate.store import Store
from annotate.store import connectors as sql
from annotate.store.imports import otel_trace_rows

PAGE_SIZE = 200  # traces fetched and imported at a time: memory stays one page's
PullProgress = Callable[[int, int], None]  # (traces pulled so far, traces to pull)


@dataclass
class PullReport:
    source: str
    listed: int = 0  # traces on the server in the window
    known: int = 0  # pulled before: not fetched again
    pulled: int = 0  # fetched now
    imported: int = 0  # calls stored as traces
    duplicates: int = 0
    without_call: list[str] = field(
        default_factory=list
    )  # traces holding no model call with an answer
    errors: list[tuple[str, str, str]] = field(
        default_factory=list
    )  # (tool trace id, field, message)
    warnings: list[tuple[str, str, str]] = field(default_factory=list)
    imports: list[int] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            **{k: getattr(self, k) for k in ("listed", "known", "pulled", "imported")},
            "duplicates": self.duplicates,
            "without_call": len(self.without_call),
            "without_call_first": self.without_call[:20],
            "errors": [
                dict(zip(("trace", "field", "message"), e, strict=True)) for e in self.errors
            ],
            "warnings": [
                dict(zip(("trace", "field", "message"), w, strict=True)) for w in self.warnings
            ],
            "imports": self.imports,
        }


def pull(
    store: Store,
    server: Server,
    since: datetime | None = None,
    until: datetime | None = None,
    progress: PullProgress | None = None,
    actor: Actor | str | None = None,
    page_size: int = PAGE_SIZE,
    context: frozenset[str] = ALL_CONTEXT,
) -> PullReport:
    """Pull the server's traces started in [since, until) that this store does not hold yet."""
    report = PullReport(server.source)
    with talking_to(server.source, "listing its traces"):
        listed = list(server.list_traces(since, until))
    report.listed = len(listed)
    fresh = new_traces(store, server.source, listed)
    report.known = report.listed - len(fresh)
    for page in pages(fresh, page_size):
        pull_page(store, server, page, report, actor, context)
        if progress:
            progress(report.pulled, len(fresh))
    return report


def new_traces(store: Store, source: str, listed: Sequence[Listed]) -> list[Listed]:
    known = sql.pulled_ids(store, source, [entry.tool_id for entry in listed])
    return [entry for entry in listed if entry.tool_id not in known]


def pages(items: Sequence[Listed], size: int) -> Iterator[Sequence[Listed]]:
    for start in range(0, len(items), max(size, 1)):
        yield items[start : start + size]


def pull_page(
    store: Store,
    server: Server,
    page: Sequence[Listed],
    report: PullReport,
    actor: Actor | str | None = None,
    context: frozenset[str] = ALL_CONTEXT,
) -> ImportReport | None:
    """Fetch and import one page of traces, then record them as pulled."""
    with talking_to(server.source, "fetching traces"):
        rows = server.page_rows(page)
    found = import_rows(store, server, rows, actor, context)
    import_id = found.import_id if found else None
    with store.transaction():
        sql.record_pulled(
            store, server.source, [(e.tool_id, e.otel_trace_id, e.start) for e in page], import_id
        )
    report.pulled += len(page)
    if found is not None:
        tell(report, found, [str(row.get("trace_id")) for row in rows])
    report.without_call.extend(_without_call(store, page, {e[0] for e in report.errors}))
    return found


def _without_call(store: Store, page: Sequence[Listed], reported: set[str]) -> list[str]:
    """The page's traces that stored no call and had no bad span: nothing in them to judge
    (no model call, or one whose library traced no content, as MLflow's autolog of
    messages.stream())."""
    stored = {
        row[0].split("-")[0]
        for row in otel_trace_rows(store, [e.otel_trace_id or "" for e in page])
    }
    return [e.tool_id for e in page if e.otel_trace_id not in stored and e.tool_id not in reported]


def import_rows(
    store: Store,
    server: Server,
    rows: Iterable[dict[str, Any]],
    actor: Actor | str | None = None,
    context: frozenset[str] = ALL_CONTEXT,
) -> ImportReport | None:
    """Import rows of the server's format; None when they hold no call at all."""
    handle, path = tempfile.mkstemp(prefix="annotate-pull-", suffix=".jsonl")
    try:
        with os.fdopen(handle, "wb") as out:
            for row in rows:
                out.write(orjson.dumps(row, default=str) + b"\n")
        return import_traces(
            store, path, server.fmt, name=server.source, actor=actor, context=context
        )
    except InputError as exc:
        if "holds no rows" in str(exc):  # no model call in the page: nothing to import
            return None
        raise
    finally:
        os.unlink(path)


def tell(report: PullReport, found: ImportReport, trace_of_line: list[str]) -> None:
    """Add one page's import to the pull's report, its errors named by the tool's trace id."""
    report.imports.append(found.import_id)
    report.imported += found.imported
    report.duplicates += found.duplicates
    for error in found.errors:
        report.errors.append((_trace(trace_of_line, error.line), error.field, error.message))
    for warning in found.warnings:
        report.warnings.append(
            (_trace(trace_of_line, warning.line), warning.field, warning.message)
        )


def _trace(trace_of_line: list[str], line: int) -> str:
    return trace_of_line[line - 1] if 0 < line <= len(trace_of_line) else f"line {line}"
