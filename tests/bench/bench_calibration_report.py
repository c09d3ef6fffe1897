"""The full agreement and calibration report on 10,000 claims x 3 reviewers, 1,000 resamples.

Ours: `annotate report`'s work (agreement document, calibration by feature with the alt-test,
the JSON/Markdown/HTML renderings) from a store file. Baseline, same run: the usual way to
bootstrap one statistic, calling the `krippendorff` package on each of 1,000 trace-resampled
tables. Sized by ANNOTATE_BENCH_CLAIMS (default 10,000; 4 claims per trace).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from annotate.agreement.calibration import calibration
from annotate.report.document import build_report, render_report
from annotate.report.render import warm_up
from annotate.stats.resamples import shared_resamples
from annotate.store import open_store
from tests.bench.figures import bench_size, show

DEFAULT_CLAIMS = 10_000
CLAIMS_PER_TRACE = 4
RESAMPLES = 1000
REVIEWERS = (("rev-a", 3), ("rev-b", 6), ("rev-c", 10))  # name, error in percent


def fill_store(db: Path, claims: int):
    """Traces with 4 claims, ~25% unsupported; three reviewers and a judge with known error."""
    traces = claims // CLAIMS_PER_TRACE
    store = open_store(db)
    store.execute(
        "INSERT INTO imports (id, kind, path, format, started_at) VALUES (1, 'traces', 'bench', 'sql', now())"
    )
    store.execute(
        "INSERT INTO traces SELECT 'tr-' || lpad(i::VARCHAR, 7, '0'), 1, i, '', "
        "TIMESTAMP '2026-01-01' + to_seconds(i), 'feature_' || (i % 8)::VARCHAR, 'risk', 'm', "
        "'q', 'r', TRUE, '{}' FROM range(?) t(i)",
        [traces],
    )
    store.execute(
        "CREATE TEMP TABLE truth AS SELECT trace_id, c AS claim_index, "
        "hash(trace_id || c::VARCHAR) % 100 < 25 AS unsupported "
        "FROM traces, range(?) r(c)",
        [CLAIMS_PER_TRACE],
    )
    store.execute(
        "INSERT INTO claims SELECT trace_id, claim_index, 'claim ' || claim_index, NULL, NULL, "
        "'provided' FROM truth"
    )
    for name, error in REVIEWERS:
        store.execute(
            "INSERT INTO label_events (trace_id, claim_index, reviewer, label, rubric_version, "
            "created_at, origin) SELECT trace_id, claim_index, ?, "
            "CASE WHEN (hash(trace_id || ? || claim_index::VARCHAR) % 100 < ?) <> unsupported "
            "THEN 'contradicted' ELSE 'supported' END, 1, "
            "TIMESTAMP '2026-02-01' + to_seconds(row_number() OVER () * 30), 'app' FROM truth",
            [name, name, error],
        )
    store.execute(
        "INSERT INTO judge_verdicts (trace_id, judge, level, claim_index, label, score, explanation, "
        "origin, import_id) SELECT trace_id, 'bench-judge', 'claim', claim_index, "
        "CASE WHEN (hash(trace_id || 'j' || claim_index::VARCHAR) % 100 < 12) <> unsupported "
        "THEN 'unsupported' ELSE 'supported' END, NULL, NULL, 'import', 1 FROM truth"
    )
    return store


def time_ours(store) -> tuple[float, float, dict]:
    started = time.perf_counter()
    warm_up()  # as `annotate report` does: the chart engine starts beside the numbers
    with shared_resamples():  # as `annotate report` does
        document = calibration(store, "bench-judge", None, "claim", ["feature"], 0, RESAMPLES)
        report = build_report(store, document, 0, RESAMPLES)
    numbers = time.perf_counter() - started
    started = time.perf_counter()
    files = render_report(report)
    rendered = time.perf_counter() - started
    assert "<svg" in files["report.html"]
    return numbers, rendered, report


def time_baseline(store) -> float:
    """Krippendorff's alpha on each of 1,000 trace-resampled tables via the `krippendorff` package."""
    import krippendorff

    rows = store.fetchall(
        "SELECT trace_id, claim_index, list(label ORDER BY reviewer) FROM label_events "
        "GROUP BY ALL ORDER BY ALL"
    )
    codes = {"supported": 0, "contradicted": 1}
    table = np.array([[codes[x] for x in labels] for _, _, labels in rows], dtype=float)
    trace_index = np.array([int(t[3:]) for t, _, _ in rows])
    members = [np.flatnonzero(trace_index == t) for t in range(trace_index.max() + 1)]
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    for _ in range(RESAMPLES):
        chosen = rng.integers(0, len(members), len(members))
        rows_ = np.concatenate([members[t] for t in chosen])
        krippendorff.alpha(reliability_data=table[rows_].T, level_of_measurement="nominal")
    return time.perf_counter() - started


def run() -> None:
    claims = bench_size("ANNOTATE_BENCH_CLAIMS", DEFAULT_CLAIMS)
    with tempfile.TemporaryDirectory(prefix="annotate-bench-") as tmp:
        store = fill_store(Path(tmp) / "report.duckdb", claims)
        numbers, rendered, report = time_ours(store)
        baseline = time_baseline(store)
        store.close()
    agreement = report["agreement"]
    show(
        f"full agreement + calibration report, {claims:,} claims x {len(REVIEWERS)} reviewers, "
        f"{RESAMPLES:,} resamples: numbers {numbers:.2f} s + HTML/Markdown/JSON {rendered:.2f} s "
        f"= {numbers + rendered:.2f} s (target < 1.5 s; alpha {agreement['krippendorff_alpha']['value']:.3f}, "
        f"judge kappa {report['calibration']['cohen_kappa']['value']:.3f})"
    )
    show(
        f"baseline: the krippendorff package on 1,000 resampled tables, one statistic only: "
        f"{baseline:.1f} s; ours / baseline {(numbers + rendered) / baseline:.2f}x"
    )
