"""Rates for every slice of a 1,000,000-trace store with 2,000 labelled traces, 1,000 resamples.

The store is written with SQL (10 features x 6 risk categories = 60 strata, one claim and one
judge verdict per trace, a 2,000-trace Neyman sample whose claims are labelled by one reviewer).
Measured in a fresh interpreter each, so peak RSS is the work's alone: `annotate rates --by
feature,risk_category` at claim and response level, all four estimators (load + compute).
Baselines in the same run: the dashboard's judge-only rate per slice as one DuckDB GROUP BY
(time), and a process that opens the store and computes nothing (memory).
Sizes: ANNOTATE_BENCH_LARGE (traces, default 1,000,000), ANNOTATE_BENCH_LABELLED (2,000).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store
from tests.bench.figures import OWN_PEAK, bench_size, child_result, megabytes, show

DEFAULT_SIZE = 1_000_000
DEFAULT_LABELLED = 2_000
RESAMPLES = 1_000

CHILD = (
    OWN_PEAK
    + """
import json, sys, time
from annotate.store import open_store
started = time.perf_counter()
store = open_store(sys.argv[1])
rows = 0
if sys.argv[2] == "rates":
    from annotate.rates.estimate import rate_rows
    from annotate.rates.inputs import load_inputs
    by = ["feature", "risk_category"]
    inputs = load_inputs(store, "bench", by)
    loaded = time.perf_counter() - started
    rows = len(rate_rows(inputs, by, ["claim", "response"], resamples=int(sys.argv[3])))
elif sys.argv[2] == "dashboard":
    loaded = 0.0
    rows = len(store.fetchall(
        "SELECT t.feature, t.risk_category, avg(CASE WHEN v.label = 'unsupported' THEN 1.0 ELSE 0.0 END) "
        "FROM traces t JOIN judge_verdicts v USING (trace_id) GROUP BY ALL"))
else:
    loaded = 0.0
store.close()
print(json.dumps({"seconds": time.perf_counter() - started, "loaded": loaded, "rows": rows,
                  "peak": own_peak()}))
"""
)


def fill_store(db: Path, count: int, labelled: int) -> None:
    store = open_store(db)
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at) VALUES (1, 'traces', 'bench', 'sql', now())"
    )
    store.execute(
        "INSERT INTO traces SELECT 'tr-' || lpad(i::VARCHAR, 8, '0'), 1, i, '', "
        "TIMESTAMP '2026-01-01' + to_seconds(i), 'feature_' || (hash(i) % 10)::VARCHAR, "
        "'risk_' || (CASE WHEN hash(i + 7) % 100 < 60 THEN 0 WHEN hash(i + 7) % 100 < 85 THEN 1 "
        "ELSE hash(i + 7) % 4 + 2 END)::VARCHAR, 'm-' || (i % 3)::VARCHAR, 'q', 'r', TRUE, '{}' "
        "FROM range(?) t(i)",
        [count],
    )
    store.execute(
        "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, score, explanation, "
        "origin, import_id) SELECT trace_id, 'j', 'claim', 0, "
        "CASE WHEN hash(trace_id) % 10 = 0 THEN 'unsupported' ELSE 'supported' END, "
        "(hash(trace_id) % 1000) / 1000.0, NULL, 'import', 1 FROM traces"
    )
    spec = SampleSpec(
        name="bench",
        n=labelled,
        by=("feature", "risk_category"),
        allocation="neyman",
        min_per_stratum=2,
        seed=1,
    )
    draw_sample(store, spec, created_by="bench")
    store.execute(
        "INSERT INTO claims SELECT trace_id, 0, 'claim', NULL, NULL, 'provided' "
        "FROM sample_units WHERE sample = 'bench'"
    )
    store.execute(
        "INSERT INTO label_events (trace_id, claim_index, reviewer, label, rubric_version, created_at, origin) "
        "SELECT u.trace_id, 0, 'rita', CASE WHEN (v.label = 'unsupported') <> (hash(u.trace_id) % 20 = 0) "
        "THEN 'contradicted' ELSE 'supported' END, 1, now(), 'import' "
        "FROM sample_units u JOIN judge_verdicts v USING (trace_id) WHERE u.sample = 'bench'"
    )
    store.close()


def measure(db: Path, what: str) -> dict:
    return child_result(CHILD, str(db), what, str(RESAMPLES), what=f"rates {what}")


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_LARGE", DEFAULT_SIZE)
    labelled = bench_size("ANNOTATE_BENCH_LABELLED", DEFAULT_LABELLED)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        db = Path(tmp) / "rates.duckdb"
        started = time.perf_counter()
        fill_store(db, count, labelled)
        show(
            f"store with {count:,} traces and {labelled:,} labelled written in {time.perf_counter() - started:.1f} s"
        )
        ours = measure(db, "rates")
        dashboard = measure(db, "dashboard")
        idle = measure(db, "idle")
    show(
        f"rates for every slice (feature x risk_category, claim + response, 4 estimators, "
        f"{RESAMPLES:,} resamples): {ours['rows']} rows in {ours['seconds']:.1f} s "
        f"({ours['loaded']:.1f} s loading the frame), peak RSS {megabytes(ours['peak'])}"
    )
    show(
        f"baseline: judge-only rate per slice as one DuckDB GROUP BY: {dashboard['seconds']:.2f} s "
        f"(ratio {ours['seconds'] / dashboard['seconds']:.0f}x); a process that opens the store: "
        f"peak RSS {megabytes(idle['peak'])} (ratio {ours['peak'] / idle['peak']:.1f}x)"
    )
