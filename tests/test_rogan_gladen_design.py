"""Rogan-Gladen on a stratified sample: sensitivity and specificity weighted by 1/pi (an
oversampled stratum counts for its population share only), and an interval that carries
the raw rate's own sampling error as well as the calibration's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import RatesInput

# stratum -> (frame traces, labelled, judge on the labelled as (gold, judge) -> count)
DESIGN = {
    '["a"]': (1000, 20, {(1, 1): 2, (1, 0): 0, (0, 0): 17, (0, 1): 1}),  # 2% sampled
    '["b"]': (100, 50, {(1, 1): 10, (1, 0): 10, (0, 0): 20, (0, 1): 10}),  # 50% sampled
}
FLAGGED_REST = {'["a"]': 120, '["b"]': 10}  # the judge's unsupported among the unlabelled


def stratified_inputs() -> RatesInput:
    frames, units, responses = [], [], []
    for key, (size, labelled, cells) in DESIGN.items():
        pairs = [pair for pair, count in cells.items() for _ in range(count)]
        gold = [g for g, _ in pairs] + [0] * (size - labelled)
        judge = [j for _, j in pairs] + [1] * FLAGGED_REST[key]
        judge += [0] * (size - len(judge))
        ids = [f"{key[2]}{i:04d}" for i in range(size)]
        frames.append(pd.DataFrame({"trace_id": ids, "stratum": key, "jr": np.array(judge, float),
                                    "jcu": judge, "jcn": 1, "unmapped": 0}))  # fmt: skip
        units.append(pd.DataFrame({"trace_id": ids[:labelled], "stratum": key,
                                   "pi": labelled / size, "weight": size / labelled}))  # fmt: skip
        responses.append(pd.DataFrame({"trace_id": ids[:labelled], "gold": gold[:labelled]}))
    return RatesInput(
        sample="s", strata_columns=["stratum"],
        populations={key: size for key, (size, _, _) in DESIGN.items()},
        frame=pd.concat(frames, ignore_index=True), units=pd.concat(units, ignore_index=True),
        claims=pd.DataFrame(columns=["trace_id", "claim_index", "gold", "error_type"]),
        responses=pd.concat(responses, ignore_index=True),
        judge_claims=pd.DataFrame(columns=["trace_id", "claim_index", "outcome"]), judge="j",
    )  # fmt: skip


def test_sensitivity_and_specificity_are_weighted_by_one_over_pi():
    """Catches them pooled unweighted: stratum b, sampled at 50%, has 50 of the 70 pairs but
    a tenth of the population. By hand, weights 1000/20 = 50 and 100/50 = 2."""
    weight = {'["a"]': 50.0, '["b"]': 2.0}
    tp, fn, tn, fp = (
        sum(weight[key] * cells[pair] for key, (_, _, cells) in DESIGN.items())
        for pair in ((1, 1), (1, 0), (0, 0), (0, 1))
    )
    sens, spec = tp / (tp + fn), tn / (tn + fp)  # 120/140 and 1090/1160
    flagged = sum(c[(1, 1)] + c[(0, 1)] for _, _, c in DESIGN.values()) + sum(FLAGGED_REST.values())
    raw = flagged / 1100
    row = rate_rows(stratified_inputs(), (), ["response"], ["rogan_gladen"], resamples=200)[0]
    assert row["rate"] == pytest.approx((raw + spec - 1) / (sens + spec - 1), abs=1e-9)
    assert "1/pi" in row["method"]
    unweighted_sens, unweighted_spec = 12 / 22, 37 / 48
    assert row["rate"] != pytest.approx(
        (raw + unweighted_spec - 1) / (unweighted_sens + unweighted_spec - 1), abs=0.01
    )


def test_a_perfect_judge_on_the_sample_alone_keeps_the_raw_rates_sampling_error():
    """Catches 20.0% [20.0%, 20.0%]: 30 responses, all labelled and all judged, the judge
    right on each (sensitivity = specificity = 1 in every resample). The interval is then the
    raw rate's own, about that of 6 in 30 (Wilson: [9.5%, 37.3%])."""
    ids = [f"t{i:02d}" for i in range(30)]
    flagged = np.r_[np.ones(6), np.zeros(24)]
    inputs = RatesInput(
        sample="s", strata_columns=["stratum"], populations={'["all"]': 30},
        frame=pd.DataFrame({"trace_id": ids, "stratum": '["all"]', "jr": flagged,
                            "jcu": flagged.astype(int), "jcn": 1, "unmapped": 0}),
        units=pd.DataFrame({"trace_id": ids, "stratum": '["all"]', "pi": 1.0, "weight": 1.0}),
        claims=pd.DataFrame(columns=["trace_id", "claim_index", "gold", "error_type"]),
        responses=pd.DataFrame({"trace_id": ids, "gold": flagged.astype(int)}),
        judge_claims=pd.DataFrame(columns=["trace_id", "claim_index", "outcome"]), judge="j",
    )  # fmt: skip
    row = rate_rows(inputs, (), ["response"], ["rogan_gladen"], resamples=1000)[0]
    assert row["rate"] == pytest.approx(0.2)
    assert row["low"] < 0.1 and row["high"] > 0.33, row
