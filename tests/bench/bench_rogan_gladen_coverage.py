"""Coverage of the Rogan-Gladen 95% interval where the truth is known, at the product's resamples.

The population and the estimator are tests/test_rogan_gladen_simulation.py's (three strata of
4,000, 1,000 and 250 traces sampled at 1%, 4% and 20%, claims clustered within traces, a judge
whose sensitivity and specificity differ by stratum), through `rogan_gladen` as every route
calls it. Figure: the share of ANNOTATE_BENCH_RG_STUDIES studies (default 300) whose interval
holds the truth, at claim and response level, with the product's 1,000 resamples. Baseline in
the same run, on the same studies: the same interval from 200 resamples (the test suite's, for
speed), whose percentile tails are noisier. Monte Carlo standard error at 300 studies: 0.013.
"""

from __future__ import annotations

import math
import time

import numpy as np

from tests.bench.figures import bench_size, show
from tests.test_rogan_gladen_simulation import corrected, study, truth

PRODUCT_RESAMPLES = 1_000
SUITE_RESAMPLES = 200


def coverage(studies: list, level: str, resamples: int) -> tuple[float, int, float]:
    """(coverage, intervals found, seconds) over `studies` at `level`."""
    target, started = truth(level), time.perf_counter()
    found = [corrected(inputs, level, seed, resamples) for seed, inputs in enumerate(studies)]
    rated = [r for r in found if r.low is not None and r.high is not None]
    share = float(np.mean([r.low <= target <= r.high for r in rated])) if rated else math.nan
    return share, len(rated), time.perf_counter() - started


def run() -> None:
    runs = bench_size("ANNOTATE_BENCH_RG_STUDIES", 300)
    rng = np.random.default_rng(2035)
    studies = [study(rng) for _ in range(runs)]
    error = 1.96 * math.sqrt(0.95 * 0.05 / runs)
    show(f"Rogan-Gladen coverage, {runs} simulated studies (95% +- {error:.3f} by chance alone)")
    for level in ("claim", "response"):
        ours = coverage(studies, level, PRODUCT_RESAMPLES)
        base = coverage(studies, level, SUITE_RESAMPLES)
        show(
            f"  {level:8}: {ours[0]:.3f} with {PRODUCT_RESAMPLES:,} resamples ({ours[1]} intervals, "
            f"{ours[2]:.0f} s); baseline {base[0]:.3f} with {SUITE_RESAMPLES} resamples "
            f"({base[2]:.0f} s)"
        )


if __name__ == "__main__":
    run()
