"""Planning and drawing a 400-trace sample across 60 strata from a 1,000,000-trace frame.

The baseline is pandas `groupby(...).sample(...)` on the same frame, measured in the
same run (once on a DataFrame already in memory, once including loading it from the
store). The traces are written straight into a store file with SQL: this measures
sampling, not import. Sized by ANNOTATE_BENCH_LARGE (default 1,000,000).
"""

from __future__ import annotations

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


def fill_store(db: Path, count: int):
    """10 features x 6 risk categories = 60 strata of uneven size, 10% with a judge verdict."""
    store = open_store(db)
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at) VALUES (1, 'traces', 'bench', 'sql', now())"
    )
    store.execute(
        "INSERT INTO traces SELECT 'tr-' || lpad(i::VARCHAR, 8, '0'), 1, i, '', "
        "TIMESTAMP '2026-01-01' + to_seconds(i), 'feature_' || (hash(i) % 10)::VARCHAR, "
        "'risk_' || (CASE WHEN hash(i + 7) % 100 < 60 THEN 0 WHEN hash(i + 7) % 100 < 85 THEN 1 ELSE hash(i + 7) % 4 + 2 END)::VARCHAR, "
        "'m-' || (i % 3)::VARCHAR, 'q', 'r', TRUE, '{}' FROM range(?) t(i)",
        [count],
    )
    store.execute(
        "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, score, explanation, "
        "origin, import_id) SELECT trace_id, 'j', 'response', NULL, "
        "CASE WHEN hash(trace_id) % 10 = 0 THEN 'unsupported' ELSE 'supported' END, NULL, NULL, 'import', 1 "
        "FROM traces WHERE source_line % 10 = 0"
    )
    return store


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
        store = fill_store(Path(tmp) / "sampling.duckdb", count)
        show(f"store with {count:,} traces written in {time.perf_counter() - started:.1f} s")
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
