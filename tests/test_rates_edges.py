"""Rates at their edges, each from a QA finding: a judge with one outcome throughout a stratum
(PPI's tuning is 0 / 0), a stratum with no gold yet, a stratum the judge never read, and a
Rogan-Gladen correction that leaves [0, 1]. Each number that was wrong showed an auditor 0%
or a rate over part of the frame, and the gate passed."""

from __future__ import annotations

import numpy as np
import pytest
from rates_data import make_store

from annotate.rates.gaps import rogan_gladen_unfit
from annotate.stats import ppi
from annotate.stats import rates as est
from annotate.store import open_store


def _rows(cli, db, *args):
    result = cli("rates", "--sample", "main", "--by", "feature", "--resamples", "200",
                 "--json", *args, db=db)  # fmt: skip
    assert result.code == 0, result.err
    return {
        (tuple(r["slice"].values()), r["level"], r["estimator"]): r for r in result.json()["rows"]
    }


def _delete(db, sql):
    store = open_store(db)
    try:
        store.execute(sql)
    finally:
        store.close()


def test_a_judge_with_one_outcome_in_a_stratum_is_the_classical_mean_there_not_zero(cli, tmp_path):
    """Catches PPI++'s NaN (the judge never flags hr_policy: no variance to tune on) clipped to
    0.0 [0.0, 0.0], which then made the overall rate 0% and the gate pass."""
    db = make_store(
        tmp_path, {"billing_qa": 0.3, "hr_policy": 0.5}, {"billing_qa": 0.3, "hr_policy": 0.0},
        judge_agrees=0.0,
    )  # fmt: skip
    rows = _rows(cli, db)
    for level in ("claim", "response"):
        hr = rows[(("hr_policy",), level, "judge_corrected")]
        # the judge carries nothing there: the gold labels' own mean, exactly half unsupported
        assert hr["rate"] == pytest.approx(0.5), hr
        assert hr["low"] < 0.5 < hr["high"]
        billing = rows[(("billing_qa",), level, "judge_corrected")]["rate"]
        overall = rows[((), level, "judge_corrected")]  # population shares 300 : 100
        assert overall["rate"] == pytest.approx(0.75 * billing + 0.25 * 0.5, abs=1e-9)
    gate = cli("gate", "--sample", "main", "--estimator", "judge_corrected", "--level",
               "response", "--max-rate", "0.2", "--resamples", "200", db=db)  # fmt: skip
    assert gate.code == 1, gate.out + gate.err  # a breach, not "ok"


def test_ppi_on_a_constant_judge_matches_ppi_python_with_lambda_one():
    """The reference: ppi-python itself with lambda = 1 (power tuning gives NaN there), which
    is the classical mean of the gold labels and its standard error."""
    from ppi_py import ppi_mean_ci

    gold = np.r_[np.ones(10), np.zeros(10)]  # power tuning: NaN here (0 / 0)
    data = ppi.StratumData(1.0, gold, np.zeros(20), np.zeros(200))
    point, se = ppi.ppi_stratum(data, floor=False)
    low, high = (float(v[0]) for v in ppi_mean_ci(gold, np.zeros(20), np.zeros(200), 0.05, lam=1))
    assert point == pytest.approx(10 / 20)
    assert se == pytest.approx((high - low) / (2 * 1.959963984540054))
    assert se == pytest.approx(np.std(gold) / np.sqrt(20), rel=1e-6)  # classical, ddof 0


def test_a_stratum_with_no_gold_yet_leaves_the_slice_without_a_number(cli, tmp_path):
    """Catches the overall rate being billing_qa's alone, with nothing said, while hr_policy
    (a quarter of the frame) had no label yet: the gate then passed for the whole frame."""
    db = make_store(tmp_path, {"billing_qa": 0.1, "hr_policy": 0.5})
    _delete(db, "DELETE FROM label_events WHERE trace_id LIKE 'hr_policy-%'")
    rows = _rows(cli, db)
    for level in ("claim", "response"):
        overall = rows[((), level, "weighted_human")]
        assert overall["rate"] is None and overall["state"] == "no number"
        assert overall["reason"] == (
            f"no {level} gold yet in 1 stratum of this slice: hr_policy (100 traces), 100 of its "
            "400 traces; the labelled strata cannot stand for them: label them, or narrow the "
            "slice"
        )
        assert rows[(("billing_qa",), level, "weighted_human")]["rate"] == pytest.approx(0.1)
    gate = cli("gate", "--sample", "main", "--max-rate", "0.35", "--resamples", "200", db=db)
    assert gate.code == 5 and "no number" in gate.out  # a warning, not "ok"


def test_a_stratum_the_judge_never_read_leaves_the_corrected_rate_uncalibrated(cli, tmp_path):
    """Catches hr_policy (no judge verdict at all) dropped from the overall corrected rate:
    it showed billing_qa's rate for the whole frame and the gate passed."""
    db = make_store(tmp_path, {"billing_qa": 0.1, "hr_policy": 0.6})
    _delete(db, "DELETE FROM judge_verdicts WHERE trace_id LIKE 'hr_policy-%'")
    rows = _rows(cli, db)
    for level in ("claim", "response"):
        overall = rows[((), level, "judge_corrected")]
        assert overall["rate"] is None
        assert overall["reason"] == (
            f"judge not calibrated here: stratum hr_policy (100 traces) has no {level} verdict "
            "from the judge: its part of the slice has nothing to correct; judge it, or narrow "
            "the slice"
        )
    gate = cli("gate", "--sample", "main", "--estimator", "judge_corrected",
               "--max-rate", "0.35", "--resamples", "200", db=db)  # fmt: skip
    assert gate.code == 2 and "not calibrated" in gate.err


def test_the_corrected_rate_weighs_strata_by_their_traces_not_by_the_judges_coverage(cli, tmp_path):
    """Catches response-level PPI weighting each stratum by its judged traces: with the judge
    silent on most of billing_qa's unlabelled traces, billing_qa's share fell below its 3/4."""
    db = make_store(
        tmp_path, {"billing_qa": 0.1, "hr_policy": 0.6}, {"billing_qa": 0.1, "hr_policy": 0.6}
    )
    _delete(
        db,
        "DELETE FROM judge_verdicts WHERE trace_id LIKE 'billing_qa-%' AND trace_id NOT IN "
        "(SELECT trace_id FROM sample_units) AND hash(trace_id) % 5 <> 0",
    )
    rows = _rows(cli, db, "--level", "response")
    parts = [
        rows[((f,), "response", "judge_corrected")]["rate"] for f in ("billing_qa", "hr_policy")
    ]
    overall = rows[((), "response", "judge_corrected")]["rate"]
    assert overall == pytest.approx(0.75 * parts[0] + 0.25 * parts[1], abs=1e-9)


@pytest.mark.parametrize(
    ("raw", "cells", "reason"),
    [
        (0.136, [8, 4, 20, 8], "the judge's raw rate (13.6%) is below its false-alarm rate on "
         "this slice's gold (28.6%): the correction is negative (-0.39), no rate"),
        (0.9, [6, 4, 9, 1], "the judge's raw rate (90.0%) is above its sensitivity on this "
         "slice's gold (60.0%): the correction is above 1 (1.60), no rate"),
        (0.2, [0, 0, 24, 0], "no unsupported gold in this slice: the judge's sensitivity is "
         "undefined"),
        (0.2, [5, 1, 0, 0], "no supported gold in this slice: the judge's specificity is "
         "undefined"),
        (0.2, [2, 2, 2, 2], "sensitivity + specificity <= 1: the judge is no better than "
         "chance here"),
        (0.3, [8, 2, 18, 2], None),
    ],
)  # fmt: skip
def test_rogan_gladen_gives_no_number_where_its_correction_cannot_hold(raw, cells, reason):
    """Catches 0.0% [0.0%, 0.0%] "ok" (every resample clipped at 0) beside 12 unsupported gold
    labels, and "no better than chance" said of a judge that matched gold on every unit."""
    assert rogan_gladen_unfit(raw, np.array(cells, float)) == reason
    # (raw + spec - 1) / (sens + spec - 1) by hand for the first two
    assert est.rogan_gladen(0.136, 8 / 12, 20 / 28, clip=False) == pytest.approx(
        (0.136 + 20 / 28 - 1) / (8 / 12 + 20 / 28 - 1)
    )
