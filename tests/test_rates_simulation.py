"""Do the rate intervals cover the truth about 95% of the time? A simulation with known truth.

Population: four strata (N = 6000, 3000, 800, 200) with true response-level hallucination
rates 5%, 10%, 25%, 40%; the overall true rate is 8.8%. The sample oversamples the small
strata: 40 traces from each (equal allocation), so an unweighted sample mean targets 20%.
Reviewers: three per trace, each flipping the true label with probability 3%; gold is their
majority, wrong with probability m = 3e^2 - 2e^3. The estimand of a human (or human-corrected)
rate is therefore the population's gold rate, sum_h N_h (p_h (1 - m) + (1 - p_h) m) / N, which
we compute exactly. Judge: slice-dependent bias, sensitivity / specificity per stratum
(0.95/0.97, 0.85/0.95, 0.7/0.85, 0.6/0.8), on every trace of the population.

The library's own rate_rows runs on each simulated population (a RatesInput built in memory,
the same object the store builds). Tolerance: over R = RUNS runs a coverage is accepted at
0.95 - 3 Monte Carlo standard errors, 3 * sqrt(0.95 * 0.05 / R) (0.0377 for R = 300). The raw
judge rate is shown biased (its mean error is over 10 of its Monte Carlo standard errors and its
interval covers the truth in under half the runs); the unweighted sample mean is shown biased
the same way. The label budget: labelling the planned number of traces gives an interval no
wider than the target in at least 80% of BUDGET_RUNS runs, with and without the judge.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from annotate.rates.budget import plan_labels
from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import RatesInput

SIZES = (6000, 3000, 800, 200)
RATES = (0.05, 0.10, 0.25, 0.40)
SENSITIVITY = (0.95, 0.85, 0.70, 0.60)
SPECIFICITY = (0.97, 0.95, 0.85, 0.80)
PER_STRATUM = 40
REVIEWER_FLIP = 0.03
RUNS = 300
RESAMPLES = 400
BUDGET_RUNS = 60


def gold_flip() -> float:
    e = REVIEWER_FLIP
    return 3 * e * e - 2 * e**3


def target() -> float:
    m = gold_flip()
    return sum(n * (p * (1 - m) + (1 - p) * m) for n, p in zip(SIZES, RATES, strict=True)) / sum(
        SIZES
    )


def simulate(rng: np.random.Generator, per_stratum=(PER_STRATUM,) * 4, sizes=SIZES, rates=RATES):
    """A population with truth, a judge on every trace, a stratified sample with noisy gold."""
    frames, units, responses = [], [], []
    for h, (size, rate, n) in enumerate(zip(sizes, rates, per_stratum, strict=True)):
        truth = rng.random(size) < rate
        catch = rng.random(size) < np.where(truth, SENSITIVITY[h], 1 - SPECIFICITY[h])
        ids = [f"h{h}-{i}" for i in range(size)]
        key = f'["s{h}"]'
        frames.append(pd.DataFrame({"trace_id": ids, "stratum": key, "jr": catch.astype(float)}))
        drawn = rng.choice(size, n, replace=False)
        votes = (truth[drawn][:, None] ^ (rng.random((n, 3)) < REVIEWER_FLIP)).sum(axis=1)
        units.append(pd.DataFrame({"trace_id": [ids[i] for i in drawn], "stratum": key,
                                   "pi": n / size, "weight": size / n}))  # fmt: skip
        responses.append(
            pd.DataFrame({"trace_id": [ids[i] for i in drawn], "gold": (votes >= 2).astype(int)})
        )
    frame = pd.concat(frames, ignore_index=True).assign(jcu=0, jcn=0, unmapped=0)
    empty_claims = pd.DataFrame(columns=["trace_id", "claim_index", "gold", "error_type"])
    return RatesInput(
        sample="sim", strata_columns=["stratum"],
        populations={f'["s{h}"]': n for h, n in enumerate(sizes)},
        frame=frame, units=pd.concat(units, ignore_index=True), claims=empty_claims,
        responses=pd.concat(responses, ignore_index=True),
        judge_claims=pd.DataFrame(columns=["trace_id", "claim_index", "outcome"]), judge="sim-judge",
    )  # fmt: skip


def tolerance(runs: int) -> float:
    return 0.95 - 3 * math.sqrt(0.95 * 0.05 / runs)


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(2026)
    found = []
    for run in range(RUNS):
        inputs = simulate(rng)
        rows = rate_rows(
            inputs, (), ["response"], ["weighted_human", "judge_raw", "judge_corrected"],
            resamples=RESAMPLES, seed=run,
        )  # fmt: skip
        found.append({r["estimator"]: r for r in rows})
        found[-1]["unweighted"] = float(inputs.responses["gold"].mean())
    return found


def covers(rows, name, truth) -> float:
    return float(np.mean([r[name]["low"] <= truth <= r[name]["high"] for r in rows]))


def test_weighted_human_interval_covers_the_truth(runs):
    coverage = covers(runs, "weighted_human", target())
    print(f"weighted_human coverage {coverage:.3f} (accepted >= {tolerance(RUNS):.3f})")
    assert coverage >= tolerance(RUNS)


def test_judge_corrected_interval_covers_the_truth(runs):
    coverage = covers(runs, "judge_corrected", target())
    widths = {
        n: np.mean([r[n]["high"] - r[n]["low"] for r in runs])
        for n in ("weighted_human", "judge_corrected")
    }
    print(
        f"judge_corrected coverage {coverage:.3f} (accepted >= {tolerance(RUNS):.3f}); mean widths {widths}"
    )
    assert coverage >= tolerance(RUNS)
    assert all(r["judge_corrected"]["rate"] is not None for r in runs)


def biased(values, truth) -> tuple[float, float]:
    errors = np.asarray(values) - truth
    return float(errors.mean()), float(errors.std(ddof=1) / math.sqrt(len(errors)))


def test_the_raw_judge_rate_is_biased_here(runs):
    bias, se = biased([r["judge_raw"]["rate"] for r in runs], target())
    assert abs(bias) > 10 * se and abs(bias) > 0.01
    assert covers(runs, "judge_raw", target()) < 0.5


def test_the_unweighted_sample_rate_is_biased_overall(runs):
    bias, se = biased([r["unweighted"] for r in runs], target())
    assert bias > 10 * se and bias > 0.05  # the oversampled risky strata pull it up
    weighted_bias, weighted_se = biased([r["weighted_human"]["rate"] for r in runs], target())
    assert abs(weighted_bias) < 3 * weighted_se + 0.002


@pytest.mark.parametrize("estimator", ["weighted_human", "judge_corrected"])
def test_labelling_the_planned_number_meets_the_target_width_in_most_runs(estimator):
    """One stratum of 5,000 traces at 20%: a pilot of 40 plans the labels for width 0.10; then
    that many are labelled afresh and the interval's width is measured (80% of runs pass)."""
    rng = np.random.default_rng(7)
    width, kind = 0.10, "without_judge" if estimator == "weighted_human" else "with_judge"
    met = []
    for run in range(BUDGET_RUNS):
        pilot = simulate(rng, (40,), (5000,), (0.20,))
        needed = plan_labels(pilot, width)["strata"][0][kind]["needed"]
        labelled = simulate(rng, (needed,), (5000,), (0.20,))
        row = rate_rows(labelled, (), ["response"], [estimator], resamples=RESAMPLES, seed=run)[0]
        met.append(row["high"] - row["low"] <= width)
    share = float(np.mean(met))
    print(f"{estimator}: planned labels met width {width} in {share:.0%} of {BUDGET_RUNS} runs")
    assert share >= 0.8
