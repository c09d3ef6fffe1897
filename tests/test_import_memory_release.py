"""An import gives back what DuckDB cached while it ran (QA: the app stayed at 645 MB after a
100k-trace page import, 268 MB before). DuckDB's own accounting of its buffer pool is read, not
the process's memory: the figures are in tests/bench/bench_import_release.py."""

from __future__ import annotations

from annotate.ingest.importer import import_traces
from annotate.store import RELEASE_AFTER, RELEASE_FLOOR
from tests.bench.synthetic import write_jsonl

MB = 1_000_000


def cached_bytes(store, tag: str = "%") -> int:
    query = "SELECT sum(memory_usage_bytes) FROM duckdb_memory() WHERE tag LIKE ?"
    return int(store.scalar(query, [tag]) or 0)


def floor_bytes() -> int:
    return int(RELEASE_FLOOR.removesuffix("MB")) * MB


def test_an_import_leaves_none_of_its_table_cached(fresh_store, tmp_path):
    path = tmp_path / "traces.jsonl"
    write_jsonl(path, 8000)  # without the release, ~31 MB of the table stay in the pool
    assert import_traces(fresh_store, path, fmt="jsonl").imported == 8000
    assert cached_bytes(fresh_store, "BASE_TABLE") == 0
    # Above the floor, only what is no cache: the index of 8,000 ids, in memory until a
    # checkpoint writes it out (~3 MB; it made the lowered limit fail, after the eviction).
    assert cached_bytes(fresh_store) - cached_bytes(fresh_store, "ART_INDEX") <= floor_bytes()
    assert fresh_store.scalar("SELECT count(*) FROM traces") == 8000  # reads back from disk


def test_the_limit_is_the_configured_one_again_after_the_release(fresh_store):
    configured = fresh_store.scalar("SELECT current_setting('memory_limit')")
    fresh_store.release_memory()
    assert fresh_store.scalar("SELECT current_setting('memory_limit')") == configured


def test_a_large_import_inside_a_callers_transaction_releases_nothing_and_commits(
    fresh_store, tmp_path
):
    """Catches the release's lowered limit failing inside the caller's transaction: DuckDB
    then aborts that transaction, and the caller's commit fails after the import succeeded."""
    path = tmp_path / "traces.jsonl"
    write_jsonl(path, RELEASE_AFTER)  # large enough to be released, were it not nested
    with fresh_store.transaction():
        assert import_traces(fresh_store, path, fmt="jsonl").imported == RELEASE_AFTER
        fresh_store.execute("CREATE TABLE after_the_import (x INTEGER)")  # still usable
    assert fresh_store.scalar("SELECT count(*) FROM traces") == RELEASE_AFTER
