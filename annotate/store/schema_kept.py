"""Migration 0026_kept_frames: computed values kept in the store for the next process. Read by
schema.py only."""

from __future__ import annotations

KEPT_FRAMES = """
CREATE TABLE kept_frames (            -- a cache, never data of record: dropping a row costs a query
    key VARCHAR PRIMARY KEY,          -- sha256 of the frame's query, its parameters and the frame mark
    kept_at TIMESTAMP NOT NULL,       -- the oldest go first (annotate.store.kept_frames.KEEP)
    frame BLOB NOT NULL               -- the Rates frame (store.rates.frame_table) as Parquet
);
"""
