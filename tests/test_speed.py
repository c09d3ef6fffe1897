"""What the speed work must not change: the numbers, the counts, and when a page recomputes.

Timings are in tests/bench/; these tests pin behaviour only.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from labelling_data import prepare

from annotate.agreement.calibration import calibration, save_thresholds
from annotate.labelling.assignment import assign
from annotate.labelling.session import claim_view, record_verdict
from annotate.stats.resamples import resample_weights, shared_resamples
from annotate.store import evidence as evidence_sql
from annotate.store.status import change_mark

JUDGE = "prod-judge-v3"


@pytest.fixture
def half_labelled(fresh_store, tmp_path):
    """12 traces with judge verdicts; alice and bob label the claims of the first 6 only."""
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    for t in range(6):
        for claim in range(3):
            label = "contradicted" if claim == 1 else "supported"
            for reviewer in ("alice", "bob"):
                view = claim_view(fresh_store, f"lt-{t:03d}", claim)
                record_verdict(fresh_store, reviewer, view, label)
    return fresh_store


def test_whole_store_calibration_reads_verdicts_of_labelled_traces_only(half_labelled):
    read = evidence_sql.verdicts(half_labelled, None, JUDGE, "claim")
    assert {row["trace_id"] for row in read} == {f"lt-{t:03d}" for t in range(6)}
    assert {row["level"] for row in read} == {"claim"}


def test_judged_without_gold_still_counts_the_unlabelled_traces(half_labelled):
    judged_claims = half_labelled.scalar(
        "SELECT count(*) FROM (SELECT DISTINCT trace_id, claim_index FROM judge_verdicts "
        "WHERE judge = ? AND level = 'claim')",
        [JUDGE],
    )
    assert judged_claims == 12  # the judge flags claim 1 of each of the 12 traces
    for scope in (None, "demo"):
        result = calibration(half_labelled, JUDGE, scope)
        with_gold = result["coverage"]["units"]
        assert with_gold == 6  # claim 1 of the six labelled traces
        assert result["gold"]["judged_without_gold"] == judged_claims - with_gold


def test_shared_resamples_draw_each_matrix_once_with_the_same_numbers():
    groups = ["t1", "t1", "t2", "t3", "t3", "t4", "t5", "t6"]
    strata = ["a", "a", "a", "a", "a", "b", "b", "b"]
    alone = resample_weights(groups, 300, 7, strata)
    assert resample_weights(groups, 300, 7, strata)[0] is not alone[0]  # nothing shared outside
    with shared_resamples():
        first = resample_weights(groups, 300, 7, strata)
        again = resample_weights(groups, 300, 7, strata)
        other_seed = resample_weights(groups, 300, 8, strata)
        with shared_resamples():  # nested: the same store of matrices
            inner = resample_weights(groups, 300, 7, strata)
    assert again[0] is first[0] and inner[0] is first[0]
    np.testing.assert_array_equal(first[0], alone[0])
    np.testing.assert_array_equal(first[1], alone[1])
    assert first[2] == alone[2] == 2
    assert not np.array_equal(other_seed[0], first[0])
    with pytest.raises(ValueError):
        first[0][0, 0] = 5  # a shared matrix is read-only


def test_change_mark_moves_with_each_input_of_the_statistics(half_labelled):
    store = half_labelled
    before = change_mark(store)
    assert change_mark(store) == before  # reading changes nothing
    record_verdict(store, "alice", claim_view(store, "lt-006", 0), "supported")
    after_label = change_mark(store)
    assert after_label != before
    save_thresholds(store, {"cohen_kappa": 0.5}, actor="lena")
    after_setting = change_mark(store)
    assert after_setting != after_label
    store.execute("UPDATE settings SET value = '1' WHERE key = 'readiness'")  # not via an act
    assert change_mark(store) != after_setting


def _old_rule(store, by, seed, ranges):
    """The draw as it was: every frame trace numbered in a window sorted by SHA-256."""
    keys = ", ".join(f"s{i}" for i in range(len(by)))
    selects = ", ".join(f"{name} AS s{i}" for i, name in enumerate(by))
    rows = store.fetchall(
        f"WITH frame AS (SELECT trace_id, {selects}, "
        "sha256(CAST(? AS VARCHAR) || ':' || trace_id) AS h FROM traces WHERE judgeable) "
        f"SELECT trace_id, {keys}, row_number() OVER (PARTITION BY {keys} ORDER BY h, trace_id) "
        "FROM frame",
        [seed],
    )
    wanted = {key: (lo, hi) for key, lo, hi in ranges}
    found = []
    for row in rows:
        key, rank = tuple(row[1:-1]), row[-1]
        lo, hi = wanted.get(key, (0, 0))
        if lo < rank <= hi:
            found.append((row[0], key, rank))
    return sorted(found, key=lambda r: ([(v is None, v) for v in r[1]], r[2]))


def test_per_stratum_top_k_draws_the_same_sample_as_the_sorted_window(fresh_store):
    from annotate.sampling.allocation import Filters
    from annotate.store.samples import draw_ranks

    fresh_store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at) "
        "VALUES (1, 'traces', 'gen', 'sql', now())"
    )
    fresh_store.execute(
        "INSERT INTO traces SELECT 'g-' || i::VARCHAR, 1, i, '', NULL, "
        "CASE WHEN i % 11 = 0 THEN NULL ELSE 'f' || (hash(i) % 6)::VARCHAR END, "
        "'r' || (hash(i + 1) % 3)::VARCHAR, 'm', 'q', 'r', i % 17 <> 0, '{}' FROM range(4000) t(i)"
    )
    by = ("feature", "risk_category")
    strata = fresh_store.fetchall(
        "SELECT feature, risk_category, count(*) FROM traces WHERE judgeable GROUP BY ALL"
    )
    for seed in (0, 1, 20260301):
        first = [((f, r), 0, min(n, 3 + len(f or "") * seed % 9)) for f, r, n in strata]
        more = [(key, hi, hi + 4) for key, _, hi in first]  # a top-up: ranks past the first draw
        for ranges in (first, more):
            ours = draw_ranks(fresh_store, Filters(), by, 1, seed, ranges)
            expected = _old_rule(fresh_store, by, seed, ranges)
            assert ours == expected
            sizes = [n for *_, n in strata]
            assert len(ours) == sum(
                min(hi, n) - min(lo, n) for (_, lo, hi), n in zip(ranges, sizes, strict=True)
            )


def test_a_draw_uses_the_plan_it_is_given_unless_its_inputs_changed(fresh_store, tmp_path):
    from dataclasses import replace

    from annotate.sampling.allocation import SampleSpec
    from annotate.sampling.samples import draw_sample, plan_sample

    prepare(fresh_store, tmp_path)
    spec = SampleSpec(name="again", n=6, by=("feature",), seed=4)
    plan = plan_sample(fresh_store, spec)
    drawn = draw_sample(fresh_store, spec, created_by="lena", plan=plan)
    assert drawn is plan  # planned once
    fresh = draw_sample(fresh_store, replace(spec, name="fresh"), created_by="lena")
    assert sorted(fresh.trace_ids) == sorted(drawn.trace_ids)  # the seed decides, not the name
    stale = replace(plan_sample(fresh_store, replace(spec, name="stale")), inputs=("old",))
    assert draw_sample(fresh_store, stale.spec, created_by="lena", plan=stale) is not stale


def test_the_store_opens_with_a_memory_limit_from_the_environment(tmp_path, monkeypatch):
    from annotate.cli.main import main
    from annotate.errors import UsageError
    from annotate.store import open_store

    monkeypatch.delenv("ANNOTATE_MEMORY_LIMIT", raising=False)
    store = open_store(tmp_path / "default.duckdb")
    assert store.scalar("SELECT current_setting('memory_limit')") == "488.2 MiB"  # 512MB
    store.close()
    monkeypatch.setenv("ANNOTATE_MEMORY_LIMIT", "1GB")
    store = open_store(tmp_path / "big.duckdb")
    assert store.scalar("SELECT current_setting('memory_limit')") == "953.6 MiB"  # 1e9 bytes
    store.close()
    monkeypatch.setenv("ANNOTATE_MEMORY_LIMIT", "lots")
    with pytest.raises(UsageError, match="ANNOTATE_MEMORY_LIMIT='lots' is not a size"):
        open_store(tmp_path / "bad.duckdb")
    # a setting the user gave is a usage error (exit 2), not "some rows rejected" (exit 1)
    traces = tmp_path / "t.jsonl"
    traces.write_text('{"trace_id": "a", "response": "r", "context": ["c"]}\n')
    assert main(["import", str(traces), "--db", str(tmp_path / "cli.duckdb")]) == 2


def test_an_import_past_the_memory_limit_stores_nothing_and_says_how_to_raise_it(
    tmp_path, monkeypatch
):
    """Catches DuckDB's out-of-memory error shown raw (it suggests SQL settings a user cannot
    type) or an import left half-written: a 1M import failed at COMMIT under the old 256MB
    default. Here 20,000 traces under an 8MB limit."""
    from annotate.errors import StoreError
    from annotate.ingest.importer import import_traces
    from annotate.store import open_store
    from tests.bench.synthetic import write_jsonl

    source = tmp_path / "traces.jsonl"
    write_jsonl(source, 20_000)
    monkeypatch.setenv("ANNOTATE_MEMORY_LIMIT", "8MB")
    store = open_store(tmp_path / "small.duckdb")
    for readers, part in (
        ("0", "4000KB, half of 8MB while an import streams"),  # the import reads its rows itself
        ("2", "2000KB of 8MB while an import streams beside its reader processes"),
    ):
        monkeypatch.setenv("ANNOTATE_IMPORT_READERS", readers)
        with pytest.raises(StoreError) as failed:
            import_traces(store, source, fmt="jsonl")
        message = str(failed.value)
        # the import streams within a part of the limit: the message names both
        assert f"ran out of its memory limit ({part})" in message
        assert "nothing of this operation was stored" in message
        assert "ANNOTATE_MEMORY_LIMIT=2GB" in message
        assert store.scalar("SELECT count(*) FROM traces") == 0
        assert store.scalar("SELECT count(*) FROM imports") == 0
    store.close()


def test_an_import_streams_within_half_the_memory_limit_and_commits_with_all_of_it(
    tmp_path, monkeypatch
):
    """Catches an import whose evictable buffers fill the whole limit before its commit needs
    it (a 1M-trace import peaked at 742-767 MB at 512MB), or a limit left lowered after the
    import, for the other sessions of the app, whether it commits or fails."""
    from annotate.errors import StoreError
    from annotate.ingest.importer import import_traces
    from annotate.store import open_store, streaming_size
    from tests.bench.synthetic import write_jsonl

    assert streaming_size("512MB") == "256000KB"
    assert streaming_size("2GB") == "1000000KB"
    assert streaming_size("1GiB") == "536870KB"
    assert streaming_size("800 mb") == "400000KB"
    # beside an import's reader processes: the half less theirs, at least a quarter
    assert streaming_size("2GB", 240_000_000) == "760000KB"
    assert streaming_size("512MB", 240_000_000) == "128000KB"
    source = tmp_path / "traces.jsonl"
    write_jsonl(source, 50)
    monkeypatch.setenv("ANNOTATE_MEMORY_LIMIT", "1GB")
    store = open_store(tmp_path / "bulk.duckdb")
    setting = "SELECT current_setting('memory_limit')"
    seen: list[str] = []

    other = store.session()  # another browser session of the app
    out_of_memory = duckdb.OutOfMemoryException("Out of Memory Error: could not allocate")
    messages: list[str] = []

    def during(trace):
        seen.append(other.scalar(setting))
        messages.append(str(other._failed(out_of_memory)))
        return []

    import_traces(store, source, fmt="jsonl", check=during)
    assert set(seen) == {"476.8 MiB"}  # 500,000,000 bytes while the rows stream
    assert "memory limit (500000KB, half of 1GB while an import streams)" in messages[0]
    assert "memory limit (1GB)" in str(other._failed(out_of_memory))
    assert store.scalar(setting) == "953.6 MiB"  # the whole 1GB again, for the commit on
    assert store.scalar("SELECT count(*) FROM traces") == 50

    def failing(trace):
        raise RuntimeError("a crash in the middle of the file")

    with pytest.raises(RuntimeError):
        import_traces(store, source, fmt="jsonl", check=failing)
    assert store.scalar(setting) == "953.6 MiB"
    with store.transaction():  # an ordinary transaction keeps the whole limit
        assert store.scalar(setting) == "953.6 MiB"
    with pytest.raises(StoreError, match="not a size"):
        streaming_size("lots")
    store.close()


def test_an_import_pauses_the_cyclic_collector_and_restores_it_however_it_ends(
    tmp_path, fresh_store, monkeypatch
):
    """Catches an import that walks its millions of rows with the cyclic collector (a fifth of
    a 200k-trace import's time), or one that leaves the collector off for the rest of the
    process (the app's other sessions) after it commits, fails, or when it was already off."""
    import gc

    from conftest import FIXTURES

    from annotate.errors import InputError
    from annotate.ingest import labels as label_import
    from annotate.ingest.importer import import_traces
    from tests.bench.synthetic import write_jsonl

    source = tmp_path / "traces.jsonl"
    write_jsonl(source, 20)
    seen: list[bool] = []

    def during(trace):
        seen.append(gc.isenabled())
        return []

    assert gc.isenabled()
    import_traces(fresh_store, source, fmt="jsonl", check=during)
    assert seen == [False] * 20 and gc.isenabled()

    def failing(trace):
        raise RuntimeError("a crash in the middle of the file")

    with pytest.raises(RuntimeError):
        import_traces(fresh_store, source, fmt="jsonl", check=failing)
    assert gc.isenabled()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError):
        import_traces(fresh_store, empty, fmt="jsonl")
    assert gc.isenabled()

    gc.disable()  # a process that runs without the collector keeps it off
    try:
        import_traces(fresh_store, FIXTURES / "generic" / "production.jsonl")
        assert not gc.isenabled()
    finally:
        gc.enable()

    labelled = tmp_path / "labels.jsonl"
    labelled.write_text(
        '{"trace_id": "t-1", "claim": 0, "reviewer": "alice", "label": "supported"}\n'
    )
    batches: list[bool] = []
    original = label_import._import_batch

    def watched(*args, **kwargs):
        batches.append(gc.isenabled())
        return original(*args, **kwargs)

    monkeypatch.setattr(label_import, "_import_batch", watched)
    assert label_import.import_labels(fresh_store, labelled).imported == 1
    assert batches and not any(batches) and gc.isenabled()


def test_overlapping_pauses_of_the_collector_are_counted():
    """Catches two imports in one process (two sessions of the app) where the first to end
    turns the collector back on under the other, or the last leaves it off."""
    import gc
    import threading

    from annotate.ingest.collector import collector_paused

    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    during_second: list[bool] = []

    def first():
        with collector_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with collector_paused():
            second_in.set()
            first_out.wait(5)
            during_second.append(gc.isenabled())  # the first import has ended

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert during_second == [False]
    assert gc.isenabled()


def test_known_ids_find_duplicates_across_batches_and_imports_and_a_collision_costs_a_lookup(
    fresh_store, tmp_path, monkeypatch
):
    """Catches the import's duplicate check by hashed ids (KnownIds, instead of joining every
    stored trace id per batch) missing a trace stored by an earlier import or an earlier batch
    of the same file, taking a hash collision for a stored trace, or leaving its table behind."""
    import json

    from annotate.ingest import importer
    from annotate.store.imports import KnownIds

    def row(trace_id, response="r"):
        return json.dumps({"trace_id": trace_id, "response": response, "context": ["c"]}) + "\n"

    first = tmp_path / "first.jsonl"
    first.write_text(row("old") + row("kept"))
    importer.import_traces(fresh_store, first)
    monkeypatch.setattr(importer, "BATCH_SIZE", 2)  # each pair of rows is a batch
    second = tmp_path / "second.jsonl"
    second.write_text(
        row("a") + row("b") + row("a") + row("c") + row("b", "changed") + row("old")
        + row("kept", "changed")
    )  # fmt: skip
    report = importer.import_traces(fresh_store, second)
    assert (report.imported, report.duplicates, report.conflicts) == (3, 2, 2)
    assert [(e.line, e.field) for e in report.errors] == [(5, "trace_id"), (7, "trace_id")]
    assert "earlier in this file (line 2)" in report.errors[0].message
    assert "by import 1 (line 2 of that file)" in report.errors[1].message
    tables = "SELECT count(*) FROM duckdb_tables() WHERE table_name = '_import_known_ids'"
    assert fresh_store.scalar(tables) == 0

    with fresh_store.transaction():
        known = KnownIds(fresh_store)
        fresh_store.execute(f"INSERT INTO {KnownIds.TABLE} SELECT hash('never-stored')")
        assert known.stored_hashes(["never-stored", "a"]).keys() == {"a"}  # a collision: read
        known.close()
    with pytest.raises(RuntimeError), fresh_store.transaction():
        KnownIds(fresh_store)
        raise RuntimeError("an import that fails")
    assert fresh_store.scalar(tables) == 0
