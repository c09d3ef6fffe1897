"""Binary gold, the judge's confusion against it with intervals, and the CLI contracts."""

from __future__ import annotations

import pytest
from labelling_data import prepare

from annotate.agreement import wilson_interval
from annotate.assignment import assign
from annotate.calibration import agreement, binary_gold, calibration
from annotate.labelling import claim_view, record_verdict
from annotate.store import open_store


@pytest.fixture
def labelled(fresh_store, tmp_path):
    """12 traces x 3 claims; the judge flags claim 1 of every trace (fixture data)."""
    prepare(fresh_store, tmp_path)
    assign(fresh_store, "demo", ["alice", "bob"], per_trace=2, seed=1)
    for t in range(12):
        trace = f"lt-{t:03d}"
        for claim in range(3):
            truth = "contradicted" if claim == 1 and t < 8 else "supported"
            for reviewer in ("alice", "bob"):
                label = truth
                if reviewer == "bob" and claim == 1 and t < 8:
                    label = "not_in_context"  # different label, same binary outcome
                if reviewer == "bob" and claim == 2 and t == 0:
                    label = "contradicted"  # a real disagreement: no gold
                record_verdict(fresh_store, reviewer, claim_view(fresh_store, trace, claim), label)
    return fresh_store


def test_binary_gold_follows_the_rubric_mapping(labelled):
    gold = binary_gold(labelled, "demo")
    assert gold[("lt-000", 1)] == "unsupported"  # contradicted vs not_in_context: both unsupported
    assert ("lt-000", 2) not in gold  # supported vs contradicted: no gold
    assert len(gold) == 35


def test_calibration_counts_and_wilson_intervals(labelled):
    result = calibration(labelled, "demo", "prod-judge-v3", by=("feature",))
    # judge flags claim 1 everywhere: 8 true positives, 4 false positives, no claim-0/2 verdicts
    assert result["confusion"] == {"tp": 8, "fp": 4, "tn": 0, "fn": 0}
    assert result["sensitivity"]["value"] == 1.0
    assert (result["sensitivity"]["low"], result["sensitivity"]["high"]) == pytest.approx(
        wilson_interval(8, 8)
    )
    assert result["specificity"]["value"] == 0.0 and result["specificity"]["units"] == 4
    assert result["precision"]["value"] == pytest.approx(8 / 12)
    assert result["cohen_kappa"]["value"] == pytest.approx(0.0)
    assert [s["slice"] for s in result["slices"]] == [
        {"feature": "billing_qa"},
        {"feature": "hr_policy"},
    ]
    assert all("too few gold claims" in s["reason"] for s in result["slices"])


def test_agreement_document(labelled):
    result = agreement(labelled, "demo", "binary")
    assert result["units"] == 36
    assert result["percent_agreement"]["value"] == pytest.approx(35 / 36)
    assert [(p["a"], p["b"], p["units"]) for p in result["cohen_kappa"]] == [("alice", "bob", 36)]
    full = agreement(labelled, "demo", "full")
    assert full["percent_agreement"]["value"] == pytest.approx(27 / 36)


def test_cli_calibration_and_agreement_json(labelled, cli, db_path):
    labelled.close()
    calibration_json = cli(
        "calibration", "--sample", "demo", "--judge", "prod-judge-v3", "--json"
    ).json()
    assert set(calibration_json) >= {
        "judge",
        "level",
        "n",
        "confusion",
        "sensitivity",
        "specificity",
        "precision",
        "accuracy",
        "balanced_accuracy",
        "cohen_kappa",
        "slices",
    }
    assert set(calibration_json["sensitivity"]) >= {"value", "low", "high", "units"}
    agreement_json = cli("agreement", "--sample", "demo", "--json").json()
    assert set(agreement_json) == {
        "level",
        "scale",
        "units",
        "percent_agreement",
        "krippendorff_alpha",
        "fleiss_kappa",
        "gwet_ac1",
        "cohen_kappa",
    }
    reopened = open_store(db_path)
    reopened.close()
