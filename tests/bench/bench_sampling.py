"""Planning and drawing a 400-trace sample across 60 strata from a 1,000,000-trace frame.

The baseline is pandas `groupby(...).sample(...)` on the same frame, measured in the
same run (once on a DataFrame already in memory, once including loading it from the
store). The traces are written straight into a store file with SQL: this measures
sampling, not import. Sized by ANNOTATE_BENCH_LARGE (default 1,000,000).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from pathlib import Path

from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample, plan_sample
from annotate.store import open_store
from tests.bench.figures import bench_size, show

DEFAULT_SIZE = 1_000_000
SAMPLE = 400
REPEATS = 5
CACHE_VERSION = 2  # bump when fill_store changes


def fill_store(db: Path, count: int):
    """Traces shaped like an import: random ids in file order, 60 strata of skewed sizes
    (10 features of Zipf-like sizes x 6 risk categories, 60/25/4/4/4/3%), timestamps,
    models, request/response text and attributes; a judge verdict on 10% of them."""
    store = open_store(db)
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at) VALUES (1, 'traces', 'bench', 'sql', now())"
    )
    store.execute(
        "INSERT INTO traces SELECT 'tr-' || substr(md5(i::VARCHAR), 1, 8) || '-' "
        "|| substr(md5(i::VARCHAR), 9, 12), 1, i, md5(i::VARCHAR || 'content'), "
        "TIMESTAMP '2026-01-01' + to_seconds(i), "
        "'feature_' || (CASE WHEN f < 30 THEN 0 WHEN f < 50 THEN 1 WHEN f < 63 THEN 2 "
        "WHEN f < 73 THEN 3 WHEN f < 81 THEN 4 WHEN f < 87 THEN 5 WHEN f < 92 THEN 6 "
        "WHEN f < 96 THEN 7 WHEN f < 98 THEN 8 ELSE 9 END)::VARCHAR, "
        "'risk_' || (CASE WHEN r < 60 THEN 0 WHEN r < 85 THEN 1 ELSE r % 4 + 2 END)::VARCHAR, "
        "'m-' || (i % 3)::VARCHAR, 'question ' || i::VARCHAR, "
        "'The answer to question ' || i::VARCHAR || ' is in the context.', TRUE, "
        "'{\"chunking\": \"' || (i % 4)::VARCHAR || '\"}' "
        "FROM (SELECT i, hash(i) % 100 AS f, hash(i + 7) % 100 AS r FROM range(?) t(i))",
        [count],
    )
    store.execute(
        "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, score, explanation, "
        "origin, import_id) SELECT trace_id, 'j', 'response', NULL, "
        "CASE WHEN hash(trace_id) % 10 = 0 THEN 'unsupported' ELSE 'supported' END, NULL, NULL, 'import', 1 "
        "FROM traces WHERE source_line % 10 = 0"
    )
    store.execute("CHECKPOINT")
    return store


def cached_store(work: Path, count: int):
    """A copy of the store for `count` traces, built once and kept in the temporary directory
    (keyed on size and on this builder's version): rebuilding 1M traces takes a while."""
    cache = Path(tempfile.gettempdir()) / f"annotate-bench-sampling-{CACHE_VERSION}-{count}.duckdb"
    if not cache.exists():
        building = cache.with_suffix(".building")
        building.unlink(missing_ok=True)
        fill_store(building, count).close()
        building.replace(cache)
    copy = work / "sampling.duckdb"
    shutil.copyfile(cache, copy)
    return open_store(copy)


def time_ours(store, count: int) -> tuple[float, float, int]:
    plans, draws = [], []
    strata = 0
    for seed in range(REPEATS):
        spec = SampleSpec(
            name=f"bench-{seed}", n=SAMPLE, allocation="neyman", min_per_stratum=2, seed=seed
        )
        started = time.perf_counter()
        plan = plan_sample(store, spec)
        plans.append(time.perf_counter() - started)
        started = time.perf_counter()
        drawn = draw_sample(store, spec, created_by="bench", plan=plan)
        draws.append(time.perf_counter() - started)
        strata = len(plan.strata)
        assert len(drawn.trace_ids) == SAMPLE
    return statistics.median(plans), statistics.median(draws), strata


def time_pandas(store, count: int) -> tuple[float, float]:
    started = time.perf_counter()
    frame = store.conn.execute(
        "SELECT trace_id, feature, risk_category FROM traces WHERE judgeable"
    ).df()
    load = time.perf_counter() - started
    fraction = SAMPLE / count
    samples = []
    for seed in range(REPEATS):
        started = time.perf_counter()
        drawn = frame.groupby(["feature", "risk_category"]).sample(frac=fraction, random_state=seed)
        samples.append(time.perf_counter() - started)
        assert abs(len(drawn) - SAMPLE) < 60
    return load, statistics.median(samples)


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_LARGE", DEFAULT_SIZE)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        started = time.perf_counter()
        store = cached_store(Path(tmp), count)
        show(f"store with {count:,} traces ready in {time.perf_counter() - started:.1f} s")
        plan, draw, strata = time_ours(store, count)
        load, pandas = time_pandas(store, count)
        store.close()
    ours = plan + draw
    show(
        f"sample {SAMPLE} of {count:,} traces across {strata} strata (neyman, median of {REPEATS}): "
        f"plan {plan * 1000:,.0f} ms + draw and store {draw * 1000:,.0f} ms = {ours * 1000:,.0f} ms"
    )
    show(
        f"pandas groupby(...).sample(frac=...): {pandas * 1000:,.0f} ms on a DataFrame in memory "
        f"(+ {load * 1000:,.0f} ms to load it); ratio ours / pandas {ours / pandas:.1f}x, "
        f"ours / (pandas + load) {ours / (pandas + load):.2f}x"
    )
