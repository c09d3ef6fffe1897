"""Judge-guided (active) sampling: coverage of its 95% intervals and the labels it saves.

Population: tests/test_active_coverage.py's (the rate simulations' four strata, 10,000 traces
at 8.8%, and a calibrated judge whose errors concentrate where its score is uncertain).

1. Coverage over ANNOTATE_BENCH_ACTIVE_STUDIES (500) simulated studies per budget (100, 200,
   400 labels): active inference (AIPW, Zrnic & Candès 2024) and the 1/pi-weighted human rate,
   overall and in a slice (stratum 1, 3,000 traces); goal 93-97%.
2. Labels for a ±3 point 95% interval on the response rate (mean half-width <= 0.03 over the
   studies), found by bisection on the budget: classical (uniform draw, human labels only: the
   baseline), uniform PPI (uniform draw, AIPW) and active; goal: active needs at least 50%
   fewer than classical and 20% fewer than uniform PPI. Each method's coverage at its figure.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from annotate.stats import active
from tests.bench.figures import bench_size, show

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' own modules
from test_active_coverage import SLICE, estimates, population  # noqa: E402
from test_rates_simulation import SIZES  # noqa: E402

BUDGETS = (100, 200, 400)
HALF_WIDTH = 0.03
SEED = 2026
CHUNK = 50


def _draw(rng, score, budget, method):
    if method == "active":
        variance = active.error_variance(score)
        floor = active.choose_floor(variance[0])
        pi = active.inclusion_probabilities(active.design_shares(variance, floor), budget)
    else:
        pi = np.full(score.shape, budget / score.shape[1])
    return pi, rng.random(pi.shape) < pi


def _chunks(count):
    """The studies, CHUNK at a time (a study holds 10,000 traces): seeded, the same each call."""
    for start in range(0, count, CHUNK):
        yield population(np.random.default_rng([SEED, start]), min(CHUNK, count - start))


def _run(count, budget, method, where="overall", judged=None):
    """(mean half-width, coverage) of `method` at `budget` over `count` studies."""
    widths, covered = [], []
    for index, (stratum, gold, verdict, score) in enumerate(_chunks(count)):
        rng = np.random.default_rng([SEED, budget, index])
        pi, drawn = _draw(rng, score, budget, method)
        columns = slice(None) if where == "overall" else stratum == SLICE
        judged = method != "classical" if judged is None else judged
        _, low, high, truth = estimates(gold, verdict, pi, drawn, columns, judged)
        widths += list((high - low) / 2)
        covered += list((low <= truth) & (truth <= high))
    return float(np.mean(widths)), float(np.mean(covered))


def labels_needed(count, method) -> tuple[int, float]:
    """The least budget (to 1%) whose mean half-width is at most HALF_WIDTH, and its coverage."""
    low, high = 10, sum(SIZES)
    while high - low > max(2, low // 100):
        middle = (low + high) // 2
        low, high = (
            (low, middle) if _run(count, middle, method)[0] <= HALF_WIDTH else (middle, high)
        )
    return high, _run(count, high, method)[1]


def run() -> None:
    count = bench_size("ANNOTATE_BENCH_ACTIVE_STUDIES", 500)
    show(f"population: {sum(SIZES)} traces, {count} studies each; goal coverage 0.93-0.97")
    for budget in BUDGETS:
        for where in ("overall", f"slice s{SLICE}"):
            width, judged = _run(count, budget, "active", where)
            human = _run(count, budget, "active", where, judged=False)[1]
            show(
                f"budget {budget:>3} {where:>9}: active inference coverage {judged:.3f} "
                f"(mean half-width {width:.3f}), weighted human {human:.3f}"
            )
    figures = {m: labels_needed(count, m) for m in ("classical", "uniform_ppi", "active")}
    for method, (n, covered) in figures.items():
        show(
            f"labels for ±{HALF_WIDTH * 100:g} points: {method:>11} {n:>5} (coverage {covered:.3f})"
        )
    classical, ppi, act = (figures[m][0] for m in ("classical", "uniform_ppi", "active"))
    show(
        f"active needs {1 - act / classical:.0%} fewer labels than classical (baseline, goal "
        f">= 50%) and {1 - act / ppi:.0%} fewer than uniform PPI (goal >= 20%)"
    )
