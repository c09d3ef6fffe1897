"""The Rates frame kept in the store for the next process (table kept_frames, migration
0026_kept_frames): a fresh app process (a restart, a bookmark opened first) or a command (`annotate
rates`, `report`, `gate`) reads the frame it would otherwise compute over every trace of the
store (0.2-0.3 s of DuckDB at 300,000 traces, more beside other work), as long as nothing the
frame reads has changed.

A kept frame is found by a key that holds everything the frame depends on: the query's text
and parameters, the label mapping, and the store's frame mark (annotate.store.status.frame_mark,
which moves with the traces, claims, verdicts, units, settings and every act). A changed query
(a new version of annotate) or a moved mark misses and computes afresh. The frame is stored as
Parquet (data, never code). Keeping is best effort: a read-only store, or two sessions keeping
the same frame at once, leave the frame computed and unkept; nothing else is written.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from annotate.errors import StoreError
from annotate.store import Store
from annotate.store import rates as sql

log = logging.getLogger(__name__)

KEEP = 8  # frames kept per store file, the newest (a few samples, slicings and judges)
# what frame_table does after its query (its sort and column names); raise it when that changes
FORMAT = 1


def frame_key(mark: Sequence[Any], args: tuple[Any, ...]) -> str:
    """The kept frame's key: sha256 of the format, `mark`, the query's text and parameters and
    the label mapping, from frame_table's arguments (`args`: filters, by, max_import_id,
    attributes, judge, outcomes, sample)."""
    filters, by, max_import_id, attributes, judge, outcomes, sample = args
    text, params = sql.frame_statement(filters, by, max_import_id, attributes, judge, sample)
    found = repr((FORMAT, tuple(mark), text, params, sorted(outcomes.items())))
    return hashlib.sha256(found.encode()).hexdigest()


def kept_frame_table(store: Store, mark: Sequence[Any], args: tuple[Any, ...]) -> pd.DataFrame:
    """sql.frame_table(store, *args): the frame kept for `mark` and these arguments, or computed
    and kept."""
    key = frame_key(mark, args)
    row = store.fetchone("SELECT frame FROM kept_frames WHERE key = ?", [key])
    if row is not None:
        return pq.read_table(pa.BufferReader(row[0])).to_pandas()
    frame = sql.frame_table(store, *args)
    keep(store, key, frame)
    return frame


def keep(store: Store, key: str, frame: pd.DataFrame) -> None:
    """Store `frame` under `key` and drop all but the newest KEEP; on a store that takes no
    write now, nothing (the frame is computed again next time)."""
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    try:
        with store.transaction():
            store.execute(
                "INSERT OR REPLACE INTO kept_frames VALUES (?, ?, ?)",
                [key, datetime.now(), sink.getvalue().to_pybytes()],
            )
            store.execute(
                "DELETE FROM kept_frames WHERE key NOT IN "
                "(SELECT key FROM kept_frames ORDER BY kept_at DESC, key LIMIT ?)",
                [KEEP],
            )
    except StoreError as exc:  # read-only, or another session kept a frame at the same time
        log.info("the rates frame was not kept: %s", exc)
