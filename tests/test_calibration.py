"""Gold, reviewer agreement and the judge's calibration on a real store, and their CLI contracts."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from labelling_data import prepare

from annotate.agreement.calibration import calibration, readiness
from annotate.agreement.reliability import agreement, pace
from annotate.ingest.labels import import_labels
from annotate.labelling.adjudication import adjudicate
from annotate.labelling.assignment import assign
from annotate.labelling.evidence import load_evidence
from annotate.labelling.session import claim_view, record_verdict
from annotate.stats.coefficients import wilson_interval
from annotate.stats.gold import claim_gold, response_gold, unresolved
from annotate.store import open_store

JUDGE = "prod-judge-v3"


@pytest.fixture
def labelled(fresh_store, tmp_path):
    """12 traces x 3 claims, two reviewers; the judge flags claim 1 of every trace and every response."""
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
                if claim == 0 and t == 11:
                    label = "not_a_claim"  # excluded from binary gold
                record_verdict(fresh_store, reviewer, claim_view(fresh_store, trace, claim), label)
    return fresh_store


def test_gold_follows_adjudication_unanimity_and_the_binary_mapping(labelled):
    gold = claim_gold(load_evidence(labelled, "demo"))
    assert gold[("lt-000", 1)].full is None  # contradicted vs not_in_context: no full gold...
    assert gold[("lt-000", 1)].binary == "unsupported"  # ...but both map to unsupported
    assert gold[("lt-000", 1)].source == "same outcome"
    assert gold[("lt-000", 2)].binary is None  # supported vs contradicted: unresolved
    assert gold[("lt-011", 0)].binary == "excluded"
    assert gold[("lt-009", 1)].full == "supported" and gold[("lt-009", 1)].source == "unanimous"
    assert unresolved(gold) == [("lt-000", 2)]
    adjudicate(labelled, "lena", "lt-000", 2, "supported", "the context says 5 days")
    gold = claim_gold(load_evidence(labelled, "demo"))
    assert gold[("lt-000", 2)].binary == "supported" and gold[("lt-000", 2)].source == "adjudicated"
    assert unresolved(gold) == []


def test_response_gold_needs_every_claim_unless_one_is_unsupported(labelled):
    evidence = load_evidence(labelled, "demo")
    responses = response_gold(evidence)
    assert responses["lt-001"] == "unsupported"  # claim 1 unsupported
    assert responses["lt-009"] == "supported"  # all three supported
    assert responses["lt-011"] == "supported"  # not_a_claim is left out, the rest supported
    assert responses["lt-000"] == "unsupported"  # claim 2 unresolved, but claim 1 is unsupported


def test_calibration_counts_wilson_intervals_and_slices(labelled):
    result = calibration(labelled, JUDGE, "demo", by=("feature",))
    # judge flags claim 1 everywhere: 8 true positives, 4 false positives, no claim-0/2 verdicts
    assert result["confusion"] == {"tp": 8, "fp": 4, "tn": 0, "fn": 0}
    assert result["sensitivity"]["value"] == 1.0
    assert (result["sensitivity"]["low"], result["sensitivity"]["high"]) == pytest.approx(
        wilson_interval(8, 8)
    )
    assert result["specificity"]["value"] == 0.0 and result["specificity"]["units"] == 4
    assert result["precision"]["value"] == pytest.approx(8 / 12)
    kappa = result["cohen_kappa"]  # a constant judge has kappa 0 whatever it does: undefined
    assert kappa["value"] is None and kappa["reason"].startswith("the judge gave one verdict only")
    assert [s["slice"] for s in result["slices"]] == [
        {"feature": "billing_qa"},
        {"feature": "hr_policy"},
    ]
    assert all("too few gold units" in s["reason"] for s in result["slices"])
    assert all(s["readiness"]["ready"] is False for s in result["slices"])
    assert result["gold"]["unresolved"] == [{"trace_id": "lt-000", "claim_index": 2}]


def test_response_level_compares_response_verdicts_with_response_gold(labelled):
    result = calibration(labelled, JUDGE, "demo", level="response")
    # the judge calls every response unsupported; 8 responses are unsupported, 4 supported
    assert result["level"] == "response"
    assert result["confusion"] == {"tp": 8, "fp": 4, "tn": 0, "fn": 0}


def test_disagreements_link_the_claim_with_the_judges_reason(labelled):
    found = calibration(labelled, JUDGE, "demo")["disagreements"]
    assert len(found) == 4
    first = found[0]
    assert first["trace_id"] == "lt-008" and first["claim_index"] == 1
    assert first["claim"] == "The amount due is $48.00."
    assert first["kind"] == "false alarm" and first["gold"] == "supported"


def test_readiness_uses_lower_bounds_not_point_estimates():
    document = {
        "cohen_kappa": {"value": 0.75, "low": 0.55, "high": 0.9},
        "sensitivity": {"value": 0.9, "low": 0.82, "high": 0.95},
    }
    verdict = readiness(document, {"cohen_kappa": 0.6, "sensitivity": 0.8})
    assert verdict["ready"] is False  # kappa's point passes 0.6, its lower bound does not
    assert "cohen_kappa" in verdict["verdict"] and "sensitivity" not in verdict["verdict"]
    assert readiness(document, {"cohen_kappa": 0.5, "sensitivity": 0.8})["ready"] is True
    undefined = {"cohen_kappa": {"value": None, "reason": "only one category"}}
    assert readiness(undefined, {"cohen_kappa": 0.6})["ready"] is False


def test_agreement_document_on_both_scales(labelled):
    result = agreement(labelled, "demo", scale="binary")
    assert result["units"] == 35  # 36 claims, one not_a_claim has no binary rating
    assert result["percent_agreement"]["value"] == pytest.approx(34 / 35)
    assert [(p["a"], p["b"], p["units"]) for p in result["cohen_kappa"]] == [("alice", "bob", 35)]
    full = agreement(labelled, "demo", scale="full")
    assert full["units"] == 36
    assert full["percent_agreement"]["value"] == pytest.approx(27 / 36)
    for name in ("percent_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        stat = full[name]
        assert stat["low"] <= stat["value"] <= stat["high"] and stat["units"] == 36


def simulated_labels(path, reviewers, start=datetime(2026, 3, 2, 9, 0)):
    """Rows for import: reviewer -> (error every k-th claim, seconds per label)."""
    rows = []
    for name, (every, seconds) in reviewers.items():
        moment = start
        for t in range(12):
            for claim in range(3):
                truth = "contradicted" if claim == 1 and t < 8 else "supported"
                n = t * 3 + claim
                label = truth
                if every and n % every == 0:
                    label = "supported" if truth != "supported" else "not_in_context"
                moment += timedelta(seconds=seconds)
                if n == 18:
                    moment += timedelta(days=1)  # a second day, after a break
                rows.append(
                    {
                        "trace_id": f"lt-{t:03d}",
                        "claim": claim,
                        "reviewer": name,
                        "label": label,
                        "created_at": moment.isoformat(),
                    }
                )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def three_reviewers(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    reviewers = {"ann": (0, 30), "ben": (0, 40), "cy": (0, 35), "dee": (2, 4)}
    import_labels(fresh_store, simulated_labels(tmp_path / "labels.jsonl", reviewers))
    return fresh_store


def test_a_careless_fast_reviewer_is_flagged_and_the_others_are_not(three_reviewers):
    result = agreement(three_reviewers, "demo", scale="binary")
    rows = {row["reviewer"]: row for row in result["per_reviewer"]}
    assert rows["ann"]["flags"] == [] and rows["ben"]["flags"] == []
    assert any("less than they agree" in f for f in rows["dee"]["flags"])
    assert any("faster" in f for f in rows["dee"]["flags"])
    assert rows["ann"]["seconds_per_label"] == 30  # the one-day break is not counted
    assert rows["dee"]["agreement_with_gold"]["value"] < rows["ann"]["agreement_with_gold"]["value"]
    assert rows["ann"]["distribution"] == {"supported": 28, "unsupported": 8}


def test_agreement_over_time_is_bucketed_by_day(three_reviewers):
    periods = agreement(three_reviewers, "demo")["over_time"]
    assert [p["period"] for p in periods] == ["2026-03-02", "2026-03-03"]
    assert sum(p["units"] for p in periods) == 36


def test_pace_ignores_breaks_over_fifteen_minutes():
    t = datetime(2026, 1, 1)
    moments = [
        t,
        t + timedelta(seconds=10),
        t + timedelta(hours=2),
        t + timedelta(hours=2, seconds=30),
    ]
    assert pace(moments) == 20
    assert pace([t]) is None


def test_prevalence_explains_high_agreement_with_low_kappa(fresh_store, tmp_path):
    prepare(fresh_store, tmp_path)
    rows = []
    for t in range(12):
        for claim in range(3):
            for reviewer in ("ann", "ben"):
                # everything supported except one disagreement: 35/36 agree, kappa near 0
                label = "contradicted" if (t, claim, reviewer) == (0, 0, "ben") else "supported"
                rows.append(
                    {
                        "trace_id": f"lt-{t:03d}",
                        "claim": claim,
                        "reviewer": reviewer,
                        "label": label,
                    }
                )
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_labels(fresh_store, path)
    result = agreement(fresh_store, "demo")
    assert result["percent_agreement"]["value"] == pytest.approx(35 / 36)
    assert result["prevalence"]["labels"]["supported"] == pytest.approx(71 / 72)
    assert "99% of ratings are 'supported'" in result["prevalence"]["note"]


def test_judge_as_one_more_rater_and_the_alt_test(three_reviewers):
    result = calibration(three_reviewers, JUDGE, "demo")
    rater = result["judge_as_rater"]
    assert rater["units"] == 12  # the judge rated claim 1 of each trace only
    assert rater["reviewers"]["units"] == rater["reviewers_and_judge"]["units"] == 12
    assert rater["reviewers_and_judge"]["value"] < rater["reviewers"]["value"]
    alt = result["alt_test"]  # 12 shared units per reviewer: below the t-test's 30
    assert alt["passed"] is None and alt["min_units"] == 30
    assert (
        "Reviewer ann skipped: 12 units shared with the judge and another reviewer, fewer "
        "than the 30 a t-test needs" in " ".join(alt["notes"])
    )


def test_slices_by_error_type_and_attribute_are_accepted(labelled):
    result = calibration(labelled, JUDGE, "demo", by=("error_type", "risk_category"))
    assert {tuple(s["slice"]) for s in result["slices"]} == {("error_type", "risk_category")}


def test_cli_json_contracts_and_usage_errors(labelled, cli, db_path, tmp_path):
    labelled.close()
    calibration_json = cli("calibration", "--sample", "demo", "--judge", JUDGE, "--json").json()
    assert set(calibration_json) >= {
        "judge", "level", "n", "confusion", "sensitivity", "specificity", "precision",
        "accuracy", "balanced_accuracy", "cohen_kappa", "slices",
    }  # fmt: skip
    assert set(calibration_json["sensitivity"]) >= {"value", "low", "high", "units"}
    agreement_json = cli("agreement", "--json").json()  # every labelled trace
    assert set(agreement_json) >= {
        "level", "scale", "units", "percent_agreement", "krippendorff_alpha",
        "fleiss_kappa", "gwet_ac1", "cohen_kappa",
    }  # fmt: skip
    assert agreement_json["sample"] is None and agreement_json["units"] == 35
    bad = cli("agreement", "--level", "response", "--scale", "full")
    assert bad.code == 2 and "binary outcome only" in bad.err
    unknown = cli("calibration", "--judge", "nobody")
    assert unknown.code == 2 and JUDGE in unknown.err
    saved = cli("calibration", "--judge", JUDGE, "--min-kappa", "0.7", "--json").json()
    assert saved["thresholds"]["cohen_kappa"] == 0.7
    again = cli("calibration", "--judge", JUDGE, "--json").json()
    assert again["thresholds"]["cohen_kappa"] == 0.7  # settable and kept
    reopened = open_store(db_path)
    reopened.close()


def test_report_writes_html_markdown_and_json_with_the_same_numbers(labelled, cli, tmp_path):
    labelled.close()
    out = tmp_path / "report"
    done = cli("report", "--judge", JUDGE, "--sample", "demo", "--out", str(out))
    assert done.code == 0, done.err
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.md"]
    document = json.loads((out / "report.json").read_text())
    expected = cli("calibration", "--judge", JUDGE, "--sample", "demo", "--json").json()
    assert document["calibration"]["confusion"] == expected["confusion"]
    precision = f"{expected['precision']['value']:.3f} [{expected['precision']['low']:.3f}, "
    html, markdown = (out / "report.html").read_text(), (out / "report.md").read_text()
    assert precision in html and precision in markdown
    assert "<script" not in html and "<svg" in html
    alpha = document["agreement"]["krippendorff_alpha"]["value"]
    assert f"{alpha:.3f}" in markdown
