"""Planning and drawing a 400-trace sample across 60 strata from a 1,000,000-trace frame.

The baseline is pandas `groupby(...).sample(...)` on the same frame, measured in the
same run (once on a DataFrame already in memory, once including loading it from the
store). A second baseline is the floor of the hash rule: DuckDB computing
sha256("<seed>:<trace_id>") for every frame trace and nothing else, which any draw that
keeps today's samples must do; a third is the judge's flagged share per stratum by one
DuckDB query, which a Neyman plan must compute. Wall time and CPU time (all threads) are
printed: CPU time moves less when other work shares the machine. The traces are written straight into a
store file with SQL: this measures sampling, not import. Sized by ANNOTATE_BENCH_LARGE
(default 1,000,000); stores of 100,000 traces or more are kept in the temporary directory
between runs.
"""

from __future__ import annotations

import os
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
CACHE_VERSION = 3  # bump when fill_store changes
CACHE_FROM = 100_000


def fill_store(db: Path, count: int):
    """Traces shaped like an import: random ids in file order, 60 strata of skewed sizes
    (10 features of Zipf-like sizes x 6 risk categories, 60/25/4/4/4/3%), timestamps,
    models, request/response text and attributes; a judge verdict on 85% of them and verdicts
    on three claims of half of those (2.1 verdicts a trace, as tests/bench/synthetic.py)."""
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
    label = "['supported', 'unsupported', 'contradicted'][(hash(trace_id, c) % 3 + 1)::BIGINT]"
    store.execute(  # like tests/bench/synthetic.py: 85% judged; half of those claim by claim too
        "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, score, "
        "explanation, origin, import_id) SELECT trace_id, 'groundedness-v3', "
        "CASE WHEN c IS NULL THEN 'response' ELSE 'claim' END, c, label, 0.5, NULL, 'import', 1 "
        f"FROM (SELECT trace_id, source_line, c, {label} AS label FROM traces, "
        "(SELECT NULL::INTEGER AS c UNION ALL SELECT range::INTEGER FROM range(3)) "
        "WHERE hash(trace_id) % 100 < (CASE WHEN c IS NULL THEN 85 ELSE 42 END)) "
        "ORDER BY source_line, c NULLS FIRST"
    )
    store.execute("CHECKPOINT")
    return store


def cached_store(work: Path, count: int):
    """A copy of the store for `count` traces, built once and kept in the temporary directory
    (keyed on size and on this builder's version): rebuilding 1M traces takes a while."""
    copy = work / "sampling.duckdb"
    if count < CACHE_FROM:
        return fill_store(copy, count)
    cache = Path(tempfile.gettempdir()) / f"annotate-bench-sampling-{CACHE_VERSION}-{count}.duckdb"
    if not cache.exists():
        building = cache.with_name(f"{cache.name}.{os.getpid()}.building")
        try:
            fill_store(building, count).close()
            building.replace(cache)
        finally:
            for leftover in building.parent.glob(building.name + "*"):
                leftover.unlink()  # a failed build, and DuckDB's WAL beside it
    shutil.copyfile(cache, copy)
    return open_store(copy)


class Clock:
    """Wall and CPU time (every thread of the process) of each timed step; medians."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> Clock:
        self._started = (time.perf_counter(), time.process_time())
        return self

    def __exit__(self, *_: object) -> None:
        self.wall.append(time.perf_counter() - self._started[0])
        self.cpu.append(time.process_time() - self._started[1])

    def __call__(self) -> Clock:
        return self

    @property
    def median(self) -> tuple[float, float]:
        return statistics.median(self.wall), statistics.median(self.cpu)


def time_ours(store) -> tuple[Clock, Clock, int]:
    plans, draws = Clock(), Clock()
    strata = 0
    for seed in range(REPEATS):
        spec = SampleSpec(
            name=f"bench-{seed}", n=SAMPLE, allocation="neyman", min_per_stratum=2, seed=seed
        )
        with plans():
            plan = plan_sample(store, spec)
        with draws():
            drawn = draw_sample(store, spec, created_by="bench", plan=plan)
        strata = len(plan.strata)
        assert len(drawn.trace_ids) == SAMPLE
    return plans, draws, strata


def time_hash_floor(store) -> Clock:
    """DuckDB's sha256 of "<seed>:<trace_id>" over the frame, reduced to one value."""
    clock = Clock()
    for seed in range(REPEATS):
        with clock():
            store.fetchall(
                "SELECT min(sha256(CAST(? AS VARCHAR) || ':' || trace_id)) FROM traces "
                "WHERE judgeable",
                [seed],
            )
    return clock


# The judge's flagged share per stratum, which Neyman allocation needs: every frame trace
# with any verdict whose label maps to unsupported (the bench's one judge: contradicted and
# unsupported), over traces with a mapped verdict. One DuckDB query, no Python around it.
JUDGE_RATE_FLOOR = (
    "WITH judged AS (SELECT trace_id, bool_or(label <> 'supported') AS flagged "
    "FROM judge_verdicts GROUP BY trace_id) "
    "SELECT feature, risk_category, count(*), avg(CASE WHEN flagged THEN 1.0 "
    "WHEN NOT flagged THEN 0.0 END) FROM traces LEFT JOIN judged USING (trace_id) "
    "WHERE judgeable GROUP BY ALL"
)


def time_judge_rate_floor(store) -> Clock:
    clock = Clock()
    for _ in range(REPEATS):
        with clock():
            store.fetchall(JUDGE_RATE_FLOOR)
    return clock


def time_pandas(store, count: int) -> tuple[Clock, Clock]:
    load = Clock()
    with load():
        frame = store.conn.execute(
            "SELECT trace_id, feature, risk_category FROM traces WHERE judgeable"
        ).df()
    fraction = SAMPLE / count
    samples = Clock()
    for seed in range(REPEATS):
        with samples():
            drawn = frame.groupby(["feature", "risk_category"]).sample(
                frac=fraction, random_state=seed
            )
        assert abs(len(drawn) - SAMPLE) < 60
    return load, samples


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_LARGE", DEFAULT_SIZE)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        started = time.perf_counter()
        store = cached_store(Path(tmp), count)
        show(f"store with {count:,} traces ready in {time.perf_counter() - started:.1f} s")
        plans, draws, strata = time_ours(store)
        floor = time_hash_floor(store)
        rates = time_judge_rate_floor(store)
        load, pandas = time_pandas(store, count)
        store.close()
    (plan, plan_cpu), (draw, draw_cpu) = plans.median, draws.median
    ours, ours_cpu = plan + draw, plan_cpu + draw_cpu
    (hashed, hashed_cpu), (panda, panda_cpu) = floor.median, pandas.median
    loaded = load.median[0]
    rated, rated_cpu = rates.median
    show(
        f"sample {SAMPLE} of {count:,} traces across {strata} strata (neyman, median of {REPEATS}): "
        f"plan {ms(plan)} + draw and store {ms(draw)} = {ms(ours)} "
        f"(CPU {ms(plan_cpu)} + {ms(draw_cpu)} = {ms(ours_cpu)})"
    )
    show(
        f"baseline pandas groupby(...).sample(frac=...): {ms(panda)} on a DataFrame in memory "
        f"(CPU {ms(panda_cpu)}), + {ms(loaded)} to load it; speed-up pandas / ours "
        f"{panda / ours:.2f}x (CPU {panda_cpu / ours_cpu:.2f}x), "
        f"(pandas + load) / ours {(panda + loaded) / ours:.2f}x"
    )
    show(
        f"baseline the hash rule alone, DuckDB sha256 of every frame trace: {ms(hashed)} "
        f"(CPU {ms(hashed_cpu)}); ratio ours / hash {ours / hashed:.2f}x "
        f"(CPU {ours_cpu / hashed_cpu:.2f}x); the hash alone / pandas {hashed / panda:.2f}x"
    )
    show(
        f"baseline the judge rate per stratum alone (Neyman's input), one DuckDB GROUP BY: "
        f"{ms(rated)} (CPU {ms(rated_cpu)}); plan / it {plan / rated:.2f}x. The two floors "
        f"together, the least a plan and draw that keep today's samples can take here: "
        f"{ms(hashed + rated)}, {(hashed + rated) / panda:.2f}x pandas' whole draw"
    )
