"""A batch of validated traces as the Arrow tables the store's insert takes, built without a
store: an import's reader process builds them beside the inserts
(annotate.ingest.reader_process), the store inserts them (annotate.store.imports). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
import pyarrow as pa
from pyarrow._compute import call_function

from annotate.traces.rows import JudgeVerdict, Trace

TRACE_COLUMNS = (
    "trace_id",
    "import_id",
    "source_line",
    "content_hash",
    "timestamp",
    "feature",
    "risk_category",
    "model",
    "request",
    "response",
    "judgeable",
    "attributes",
)


CONTEXT_COLUMNS = ("trace_id", "position", "source", "text")
CLAIM_COLUMNS = ("trace_id", "claim_index", "text", "start_offset", "end_offset", "origin")
VERDICT_COLUMNS = (
    "trace_id",
    "judge",
    "level",
    "claim_index",
    "label",
    "score",
    "explanation",
    "origin",
    "import_id",
)
_TEXT = attrgetter("text")
_SOURCE = attrgetter("source")
_START = attrgetter("start")
_END = attrgetter("end")


@dataclass
class TraceTables:
    """A batch of validated traces as the insert's Arrow tables, built without a store (an
    import's reader process builds them beside the inserts, annotate.ingest.reader_process).

    Every table but `traces` has a `_trace` column: the position of its row's trace in the
    batch, so that `select` keeps the rows of some traces (the fresh ones) only; the inserts
    name their columns and never read it."""

    traces: pa.Table
    contexts: pa.Table | None
    claims: pa.Table | None
    verdicts: pa.Table | None  # the verdicts with a label
    ratings: list[dict[str, Any]]  # a verdict's ratings, judge_ratings rows with `_trace`
    attribute_names: list[tuple[str, ...]]  # each trace's attribute keys

    def select(self, positions: Sequence[int]) -> TraceTables:
        """The tables of the traces at `positions` (ascending) only."""
        if len(positions) == self.traces.num_rows:
            return self
        keep = np.zeros(self.traces.num_rows, bool)
        keep[list(positions)] = True
        return TraceTables(
            self.traces.filter(pa.array(keep)),
            _kept(self.contexts, keep),
            _kept(self.claims, keep),
            _kept(self.verdicts, keep),
            [row for row in self.ratings if keep[row["_trace"]]],
            [self.attribute_names[i] for i in positions],
        )

    @staticmethod
    def joined(parts: Sequence[TraceTables]) -> TraceTables:
        """The tables of consecutive parts of a batch as one (built with `first` counting the
        traces of the parts before)."""
        return TraceTables(
            pa.concat_tables([part.traces for part in parts]),
            _concat([part.contexts for part in parts]),
            _concat([part.claims for part in parts]),
            _concat([part.verdicts for part in parts]),
            [row for part in parts for row in part.ratings],
            [names for part in parts for names in part.attribute_names],
        )


def _concat(tables: list[pa.Table | None]) -> pa.Table | None:
    present = [table for table in tables if table is not None]
    return pa.concat_tables(present) if present else None


def _kept(table: pa.Table | None, keep: np.ndarray) -> pa.Table | None:
    if table is None:
        return None
    return table.filter(pa.array(keep[table.column("_trace").to_numpy()]))


def trace_tables(import_id: int, traces: Sequence[Trace], first: int = 0) -> TraceTables:
    """The insert's tables of validated traces, built column by column (attribute getters
    over flat lists, ids repeated by Arrow): a few C-level passes per column, not a tuple per
    row. `first`: the batch position of the first of them (`_trace`). Pure: no store."""
    ids = pa.array([t.trace_id for t in traces], pa.string())
    contexts = [t.contexts for t in traces]
    items = [c for group in contexts for c in group]
    claims = [t.claims for t in traces]
    flat = [c for group in claims for c in group]
    judged = [t.judge for t in traces]
    verdicts = [v for group in judged for v in group]
    context_table = claim_table = verdict_table = None
    ratings: list[dict[str, Any]] = []
    if items:
        context_table = pa.table(
            {
                **_owners(ids, contexts, "position", first),
                "source": pa.array(list(map(_SOURCE, items)), pa.string()),
                "text": pa.array(list(map(_TEXT, items)), pa.string()),
            }
        )
    if flat:
        claim_table = pa.table(
            {
                **_owners(ids, claims, "claim_index", first),
                "text": pa.array(list(map(_TEXT, flat)), pa.string()),
                "start_offset": pa.array(list(map(_START, flat)), pa.int32()),
                "end_offset": pa.array(list(map(_END, flat)), pa.int32()),
                "origin": pa.repeat("provided", len(flat)),
            }
        )
    if verdicts:
        owners = _owners(ids, judged, "position", first)
        verdict_table, ratings = judged_tables(import_id, owners, verdicts)
    return TraceTables(
        _trace_table(import_id, traces),
        context_table,
        claim_table,
        verdict_table,
        ratings,
        [tuple(t.attributes) for t in traces],
    )


def judged_tables(
    import_id: int, owners: dict[str, Any], verdicts: Sequence[JudgeVerdict]
) -> tuple[pa.Table | None, list[dict[str, Any]]]:
    """The verdicts with a label as judge_verdicts' table; the ratings (a verdict may only
    rate) as judge_ratings rows. `owners`: _owners' trace_id and `_trace` of each verdict."""
    ids, positions = owners["trace_id"], owners["_trace"]
    ratings: list[dict[str, Any]] = []
    if any(v.ratings or not v.label for v in verdicts):
        ratings = [
            {"trace_id": ids[i].as_py(), "judge": v.judge, "criterion": name, "score": score,
             "explanation": v.explanation, "origin": "import", "import_id": import_id,
             "_trace": positions[i].as_py()}
            for i, v in enumerate(verdicts)
            for name, score in v.ratings
        ]  # fmt: skip
        kept = pa.array([i for i, v in enumerate(verdicts) if v.label], pa.int64())
        ids, positions = _take(ids, kept), _take(positions, kept)
        verdicts = [verdicts[i] for i in kept.to_pylist()]
    if not verdicts:
        return None, ratings
    table = _verdict_table(import_id, ids, verdicts).append_column("_trace", positions)
    return table, ratings


def _owners(
    ids: pa.Array, groups: Sequence[Sequence[Any]], position: str, first: int = 0
) -> dict[str, Any]:
    """The owning trace_id of every item of `groups` (one group per trace), its `_trace` (the
    owner's position among `ids`, plus `first`) and its position in its group."""
    counts = np.fromiter(map(len, groups), np.int64, len(groups))
    owner = np.repeat(np.arange(len(groups), dtype=np.int32), counts)
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return {
        "trace_id": _take(ids, pa.array(owner)),
        position: pa.array(np.arange(len(owner)) - starts, pa.int32()),
        "_trace": pa.array(owner + first if first else owner),
    }


def _take(values: pa.Array, indices: pa.Array) -> pa.Array:
    """values.take(indices) by pyarrow's kernel itself: `Array.take` imports pyarrow.compute
    first, the Python wrappers of every kernel (65-115 ms, once a process; a sample drawn
    in place imports only its 400 traces)."""
    return call_function("take", [values, indices])


def _verdict_table(import_id: int, owners: pa.Array, verdicts: Sequence[JudgeVerdict]) -> pa.Table:
    count = len(verdicts)
    return pa.table(
        {
            "trace_id": owners,
            "judge": pa.array([v.judge for v in verdicts], pa.string()),
            "level": pa.array([v.level for v in verdicts], pa.string()),
            "claim_index": pa.array([v.claim for v in verdicts], pa.int32()),
            "label": pa.array([v.label for v in verdicts], pa.string()),
            "score": pa.array([v.score for v in verdicts], pa.float64()),
            "explanation": pa.array([v.explanation for v in verdicts], pa.string()),
            "origin": pa.repeat("import", count),
            "import_id": pa.repeat(pa.scalar(import_id, pa.int32()), count),
        }
    )


def _trace_table(import_id: int, traces: Sequence[Trace]) -> pa.Table:
    return pa.table(
        {
            "trace_id": pa.array([t.trace_id for t in traces], pa.string()),
            "import_id": pa.repeat(pa.scalar(import_id, pa.int32()), len(traces)),
            "source_line": pa.array([t.line for t in traces], pa.int32()),
            "content_hash": pa.array([t.content_hash for t in traces], pa.string()),
            "timestamp": pa.array([t.timestamp for t in traces], pa.timestamp("us")),
            "feature": pa.array([t.feature for t in traces], pa.string()),
            "risk_category": pa.array([t.risk_category for t in traces], pa.string()),
            "model": pa.array([t.model for t in traces], pa.string()),
            "request": pa.array([t.request for t in traces], pa.string()),
            "response": pa.array([t.response for t in traces], pa.string()),
            "judgeable": pa.array([t.is_judgeable for t in traces], pa.bool_()),
            "attributes": pa.array([t.attributes_json for t in traces], pa.string()),
        }
    )
