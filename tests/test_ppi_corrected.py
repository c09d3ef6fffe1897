"""The judge-corrected rate against published and independent references: truescore's
published example (its README: judge-only 0.8383, PPI++ 0.7150 [0.6836, 0.7463]) and
ppi-python's own functions; the standard-error floor taken at the tuned lambda never makes
the corrected interval wider than ppi-python's on ordinary data, nor than the human one.

tests/fixtures/truescore/support_eval.csv: examples/data/support_eval.csv of truescore 0.7.4
(Apache-2.0, pypi.org/project/truescore), its id, judge and human columns: 4,000 answers
graded by a judge, 600 of them by a person.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
from rates_data import make_store

from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import RatesInput
from annotate.stats import ppi

TRUESCORE = Path(__file__).parent / "fixtures" / "truescore" / "support_eval.csv"
PUBLISHED = (0.7150, 0.6836, 0.7463)  # truescore's README: corrected pass rate (ppi++)
Z95 = 1.959963984540054


def truescore_inputs() -> RatesInput:
    """The example as one stratum of 4,000 responses, the 600 graded ones the sample; a pass
    stands where the app counts an unsupported response (PPI's mean is the same either way)."""
    table = pd.read_csv(TRUESCORE)
    graded = table[table["human_passed"].notna()]
    frame = pd.DataFrame({"trace_id": table["example_id"], "stratum": '["all"]',
                          "jr": table["judge_passed"].astype(float), "jcu": 0, "jcn": 0,
                          "unmapped": 0})  # fmt: skip
    units = pd.DataFrame({"trace_id": graded["example_id"], "stratum": '["all"]',
                          "pi": len(graded) / len(table), "weight": len(table) / len(graded)})  # fmt: skip
    return RatesInput(
        sample="truescore", strata_columns=["stratum"], populations={'["all"]': len(table)},
        frame=frame, units=units,
        claims=pd.DataFrame(columns=["trace_id", "claim_index", "gold", "error_type"]),
        responses=pd.DataFrame({"trace_id": graded["example_id"],
                                "gold": graded["human_passed"].astype(int)}),
        judge_claims=pd.DataFrame(columns=["trace_id", "claim_index", "outcome"]),
        judge="truescore-judge",
    )  # fmt: skip


def truescore_arrays() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    table = pd.read_csv(TRUESCORE)
    graded = table["human_passed"].notna()
    gold = table.loc[graded, "human_passed"].to_numpy(float)
    return (
        gold,
        table.loc[graded, "judge_passed"].to_numpy(float),
        table.loc[~graded, "judge_passed"].to_numpy(float),
    )


def test_truescores_published_example_through_rate_rows():
    """Catches the floor taken at lambda = 1 (plain PPI's variance): it bound here and gave
    0.7151 [0.6807, 0.7494], 10% wider than the published interval and ppi-python's."""
    rows = rate_rows(truescore_inputs(), (), ["response"], ["judge_raw", "judge_corrected"],
                     resamples=200)  # fmt: skip
    found = {row["estimator"]: row for row in rows}
    assert found["judge_raw"]["rate"] == pytest.approx(0.8383, abs=1e-4)
    corrected = found["judge_corrected"]
    assert (corrected["rate"], corrected["low"], corrected["high"]) == pytest.approx(
        PUBLISHED, abs=1e-3
    )
    gold, judged, rest = truescore_arrays()
    low, high = (float(v[0]) for v in ppi_mean_ci(gold, judged, rest, alpha=0.05))
    assert (corrected["low"], corrected["high"]) == pytest.approx((low, high), abs=1e-3)
    assert corrected["rate"] == pytest.approx(
        float(ppi_mean_pointestimate(gold, judged, rest)[0]), abs=1e-12
    )


def test_the_tuned_lambda_is_ppi_pythons():
    """ppi-python tunes lambda inside ppi_mean_ci; at ours it gives the same interval."""
    rng = np.random.default_rng(5)
    gold = (rng.random(120) < 0.3).astype(float)
    examples = [
        truescore_arrays(),
        (gold, np.where(rng.random(120) < 0.8, gold, 1 - gold), (rng.random(900) < 0.35) * 1.0),
        (gold, (rng.random(120) < 0.5) * 1.0, (rng.random(900) < 0.5) * 1.0),  # no skill
    ]
    for y, yhat, rest in examples:
        lam = ppi.tuned_lambda(y, yhat, rest)
        assert 0 <= lam <= 1
        ours = [float(v[0]) for v in ppi_mean_ci(y, yhat, rest, alpha=0.05, lam=lam)]
        theirs = [float(v[0]) for v in ppi_mean_ci(y, yhat, rest, alpha=0.05)]
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_the_estimate_and_standard_error_at_a_lambda_are_ppi_pythons():
    """The app computes PPI++ at a given lambda itself (ppi-python's import is 2 s of numba,
    scikit-learn and statsmodels); ppi-python's two functions are the reference: its point and
    its normal interval's half-width over z, on the published example, skilled, unskilled and
    constant judges, small and large n, at the tuned lambda, 0, 1 and values between.
    Catches sample variances (ddof=1) where ppi-python takes population ones, the imputed part
    divided by n instead of N, or lambda left off either part."""
    rng = np.random.default_rng(11)
    examples = [truescore_arrays()]
    for n, big_n, skill in ((8, 40, 0.9), (60, 700, 0.8), (300, 5000, 0.5), (25, 25, 1.0)):
        gold = (rng.random(n) < 0.3).astype(float)
        judged = np.where(rng.random(n) < skill, gold, 1 - gold)
        examples.append((gold, judged, (rng.random(big_n) < 0.3) * 1.0))
    examples.append((np.ones(10), np.ones(10), np.ones(50)))  # constant judge and gold
    for y, yhat, rest in examples:
        for lam in (ppi.tuned_lambda(y, yhat, rest), 0.0, 0.25, 0.7, 1.0):
            point, se = ppi._at(y, yhat, rest, lam)
            want = float(ppi_mean_pointestimate(y, yhat, rest, lam=lam)[0])
            low, high = (float(v[0]) for v in ppi_mean_ci(y, yhat, rest, alpha=0.05, lam=lam))
            assert point == pytest.approx(want, abs=1e-12)
            assert se == pytest.approx((high - low) / (2 * Z95), abs=1e-12)
            assert (point - Z95 * se, point + Z95 * se) == pytest.approx((low, high), abs=1e-12)


def test_rates_do_not_import_ppi_python(tmp_path):
    """A lead's first visit to Rates computes the judge-corrected rate without ppi-python's
    import (numba, scikit-learn, statsmodels: 2 s of it): a fresh interpreter computes the
    rates, PPI among them, and has not loaded it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from rates_data import JUDGE, make_store\n"
        "from annotate.rates.view import rates_view\n"
        "from annotate.store import open_store\n"
        f"db = make_store(Path({str(tmp_path)!r}), {{'billing_qa': 0.2, 'hr_policy': 0.3}})\n"
        "view = rates_view(open_store(db), 'main', ('feature',), JUDGE, 'response', 0.1)\n"
        "rows = [r for r in view['rows'] if r['estimator'] == 'judge_corrected']\n"
        "assert rows and rows[0]['rate'] is not None, rows\n"
        "print(sorted(m for m in ('ppi_py', 'numba', 'sklearn', 'statsmodels') if m in sys.modules))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False,
        cwd=Path(__file__).parent,
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == "[]"


def test_the_floor_at_the_tuned_lambda_by_hand():
    """Catches the floor's cells valued at lambda = 1 whatever lambda is, a pseudo-count left
    off a cell, or the imputed part not scaled by lambda^2. By hand at lambda = 0.6 on 3 hits,
    2 misses, 30 correct rejections and 5 false alarms (n = 40), one pseudo-count per
    disagreement cell (n + 2 = 42): Y - 0.6 Yhat is 0.4, 1, 0, -0.6 in those cells."""
    gold = np.r_[np.ones(5), np.zeros(35)]
    judged = np.r_[np.ones(3), np.zeros(2), np.zeros(30), np.ones(5)]
    rest = np.r_[np.ones(50), np.zeros(150)]
    shares = np.array([3, 2 + 1, 30, 5 + 1]) / 42
    values = np.array([0.4, 1.0, 0.0, -0.6])
    rectifier = shares @ values**2 - (shares @ values) ** 2
    want = math.sqrt(rectifier / 40 + 0.36 * (0.25 * 0.75) / 200)
    assert ppi.PSEUDO_COUNT == 1.0
    assert ppi.rectifier_floor(gold, judged, rest, 0.6) == pytest.approx(want, rel=1e-12)
    # at lambda 0 the floor is the gold labels' own variance, smoothed: (5 + 1) / 42 unsupported
    share = 6 / 42
    assert ppi.rectifier_floor(gold, judged, rest, 0.0) == pytest.approx(
        math.sqrt(share * (1 - share) / 40)
    )


def test_a_judge_that_never_disagreed_still_leaves_an_interval():
    """The case the floor exists for: 40 labels that all agree with the judge (ppi-python's
    standard error is 0) do not prove the judge never errs."""
    gold = np.r_[np.zeros(38), np.ones(2)]
    data = ppi.StratumData(1.0, gold, gold.copy(), np.zeros(5000))
    assert ppi.ppi_stratum(data, floor=False)[1] == pytest.approx(0.0, abs=1e-12)
    point, se = ppi.ppi_stratum(data)
    lam = ppi.tuned_lambda(data.gold, data.judged, data.unlabelled)
    assert se == pytest.approx(ppi.rectifier_floor(data.gold, data.judged, data.unlabelled, lam))
    assert se > 0.01
    assert point == pytest.approx(float(ppi_mean_pointestimate(gold, gold, data.unlabelled)[0]))


def test_the_corrected_interval_is_never_wider_than_the_gold_labels_alone():
    """Catches the floor of plain PPI applied where the tuning turned the judge down: with
    an uninformative judge the 'corrected' interval was the wider (widths 0.185 vs 0.127)."""
    rng = np.random.default_rng(11)
    for _ in range(30):
        gold = (rng.random(60) < rng.uniform(0.05, 0.5)).astype(float)
        judged = np.where(rng.random(60) < rng.uniform(0.3, 0.95), gold, 1 - gold)
        rest = (rng.random(600) < 0.3).astype(float)
        _, se = ppi.ppi_stratum(ppi.StratumData(1.0, gold, judged, rest))
        alone = max(float(np.std(gold)) / math.sqrt(60), ppi.rectifier_floor(gold, judged, rest, 0))
        assert se <= alone + 1e-12


def test_an_uninformative_judges_correction_is_no_wider_than_the_human_rate(cli, tmp_path):
    """Through the CLI: the gold is shuffled against the judge's verdicts (no skill). The
    tuning turns the judge down (lambda near 0), so the corrected interval is the gold
    labels' own normal one, within 1% of the human rate's BCa one (here 0.1651 vs 0.1649;
    it was 46% wider with the floor of plain PPI)."""
    db = make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}, judge_agrees=0.0)
    result = cli("rates", "--sample", "main", "--level", "response", "--resamples", "200",
                 "--json", db=db)  # fmt: skip
    assert result.code == 0, result.err
    rows = {r["estimator"]: r for r in result.json()["rows"] if not r["slice"]}
    width = {name: rows[name]["high"] - rows[name]["low"] for name in rows if rows[name]["low"]}
    assert width["judge_corrected"] <= 1.01 * width["weighted_human"], width
