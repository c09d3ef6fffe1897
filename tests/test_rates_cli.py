"""`annotate rates`, `gate`, `sample show`, `plan-labels`, `trend` on a small store whose gold
rates are chosen: the gate's exit codes, the JSON contract, the sample listing."""

from __future__ import annotations

import pytest
from rates_data import make_store


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    made = {}
    for name, rates in {
        "clean": {"billing_qa": 0.0, "hr_policy": 0.0},
        "bad": {"billing_qa": 0.5, "hr_policy": 0.5},
        "borderline": {"billing_qa": 0.12, "hr_policy": 0.10},
    }.items():
        made[name] = make_store(tmp_path_factory.mktemp(name), rates)
    made["small"] = make_store(
        tmp_path_factory.mktemp("small"), {"billing_qa": 0.2, "hr_policy": 0.2}, sample_n=12
    )
    return made


def test_rates_json_has_every_estimator_per_slice_with_the_contract_names(cli, stores):
    result = cli(
        "rates",
        "--sample",
        "main",
        "--by",
        "feature",
        "--json",
        "--resamples",
        "200",
        db=stores["bad"],
    )
    assert result.code == 0, result.err
    rows = result.json()["rows"]
    keys = {"slice", "level", "estimator", "n", "rate", "low", "high", "method", "state"}
    assert all(keys <= set(r) for r in rows)
    found = {(tuple(r["slice"].items()), r["level"], r["estimator"]) for r in rows}
    for level in ("claim", "response"):
        for name in ("weighted_human", "judge_raw", "judge_corrected", "rogan_gladen"):
            assert (((("feature", "hr_policy"),), level, name)) in found
            assert (((), level, name)) in found
    by_name = {(r["estimator"], r["level"]): r for r in rows if not r["slice"]}
    # labels are exactly half unsupported in each feature: the weighted rate is 0.5 exactly
    assert by_name[("weighted_human", "claim")]["rate"] == pytest.approx(0.5)
    assert by_name[("judge_corrected", "claim")]["judge"] == "prod-judge"


def test_too_little_data_counts_its_labelled_traces_in_the_number_they_take(cli, tmp_path):
    """Catches "too little data: 1 labelled traces (< 10)"."""
    db = make_store(tmp_path, {"billing_qa": 0.0, "hr_policy": 0.0}, sample_n=2)
    result = cli("rates", "--sample", "main", "--by", "feature", "--json", db=db)
    assert result.code == 0, result.err
    reasons = {
        tuple(r["slice"].values()): r["reason"]
        for r in result.json()["rows"]
        if (r["estimator"], r["level"]) == ("weighted_human", "claim")
    }
    assert reasons == {
        (): "too little data: 2 labelled traces (< 10)",
        ("billing_qa",): "too little data: 1 labelled trace (< 10)",
        ("hr_policy",): "too little data: 1 labelled trace (< 10)",
    }


def test_gate_exits_0_when_every_interval_is_under_the_threshold(cli, stores):
    result = cli(
        "gate", "--sample", "main", "--max-rate", "0.10", "--resamples", "200", db=stores["clean"]
    )
    assert result.code == 0, result.out + result.err
    assert "ok: every interval lies under the threshold" in result.out


def test_gate_exits_1_on_a_breach(cli, stores):
    result = cli(
        "gate",
        "--sample",
        "main",
        "--max-rate",
        "0.10",
        "--slice",
        "feature=hr_policy",
        "--json",
        db=stores["bad"],
    )
    assert result.code == 1, result.err
    document = result.json()
    assert document["rows"][0]["slice"] == {"feature": "hr_policy"}
    assert document["rows"][0]["state"] == "breach" and document["rows"][0]["low"] > 0.10


def test_gate_exits_4_when_the_threshold_is_inside_the_interval(cli, stores):
    result = cli(
        "gate",
        "--sample",
        "main",
        "--max-rate",
        "0.10",
        "--json",
        "--resamples",
        "200",
        db=stores["borderline"],
    )
    assert result.code == 5, result.err  # not 4: that is a bug's code
    row = result.json()["rows"][0]
    assert row["low"] < 0.10 < row["high"] and row["state"] == "warning"


def test_gate_on_the_corrected_rate_refuses_a_slice_where_the_judge_is_not_calibrated(cli, stores):
    result = cli(
        "gate", "--sample", "main", "--max-rate", "0.10", "--slice", "feature=hr_policy",
        "--estimator", "judge_corrected", db=stores["small"],
    )  # fmt: skip
    assert result.code == 2
    assert "cannot gate slice feature=hr_policy" in result.err and "not calibrated" in result.err


def test_gate_on_the_corrected_rate_runs_where_the_judge_is_calibrated(cli, stores):
    result = cli(
        "gate",
        "--sample",
        "main",
        "--max-rate",
        "0.10",
        "--estimator",
        "judge_corrected",
        "--json",
        db=stores["bad"],
    )
    assert result.code == 1, result.err
    assert result.json()["rows"][0]["estimator"] == "judge_corrected"


def test_sample_show_lists_traces_with_stratum_probability_and_weight(cli, stores):
    result = cli("sample", "show", "main", "--json", db=stores["clean"])
    assert result.code == 0, result.err
    document = result.json()
    assert len(document["units"]) == 120
    strata = {tuple(s["stratum"]): s for s in document["strata"]}
    assert (
        strata[("hr_policy",)]["population"] == 100 and strata[("hr_policy",)]["sample_size"] == 60
    )
    unit = next(u for u in document["units"] if u["stratum_key"] == '["hr_policy"]')
    assert unit["inclusion_probability"] == pytest.approx(0.6) and unit["weight"] == pytest.approx(
        100 / 60
    )
    csv = cli("sample", "show", "main", "--csv", db=stores["clean"])
    assert csv.out.splitlines()[0] == "trace_id,stratum,draw,inclusion_probability,weight"
    assert len(csv.out.splitlines()) == 121


def test_plan_labels_asks_fewer_labels_with_an_accurate_judge(cli, stores):
    result = cli("plan-labels", "--sample", "main", "--width", "0.04", "--json", db=stores["bad"])
    assert result.code == 0, result.err
    plan = result.json()
    assert plan["more_without_judge"] > plan["more_with_judge"] >= 0
    assert {s["stratum"] for s in plan["strata"]} == {'["billing_qa"]', '["hr_policy"]'}
    table = cli("plan-labels", "--sample", "main", "--width", "0.04", db=stores["bad"]).out
    rows = table.splitlines()[1:3]  # the strata as `sample` prints them, not as JSON keys
    assert sorted(row.split()[0] for row in rows) == ["billing_qa", "hr_policy"]


def test_trend_reports_windows_and_names_its_drift_test(cli, stores):
    result = cli(
        "trend",
        "--sample",
        "main",
        "--window",
        "week",
        "--json",
        "--resamples",
        "200",
        db=stores["bad"],
    )
    assert result.code == 0, result.err
    document = result.json()
    assert document["rows"] and all("week" in r["slice"] for r in document["rows"])
    assert "z-test" in document["test"]
    assert all({"from", "to", "z", "p", "alert"} <= set(d) for d in document["drift"])


def test_an_unknown_slice_column_is_a_usage_error(cli, stores):
    result = cli("rates", "--sample", "main", "--by", "colour", db=stores["clean"])
    assert result.code == 2 and "cannot slice by 'colour'" in result.err


def test_plan_labels_top_up_draws_what_each_stratum_still_needs(cli, tmp_path):
    db = make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.2}, sample_n=40)
    result = cli("plan-labels", "--sample", "main", "--width", "0.3", "--top-up", "--json", db=db)
    assert result.code == 0, result.err
    plan = result.json()
    shown = cli("sample", "show", "main", "--json", db=db).json()
    sizes = {s["stratum"][0]: s["sample_size"] for s in shown["strata"]}
    for stratum in plan["strata"]:
        name = stratum["stratum"].split('"')[1]
        assert sizes[name] == max(20, stratum["without_judge"]["needed"])
    assert plan["top_up"]["added"] == sum(sizes.values()) - 40


def test_a_typo_in_a_sample_slice_or_column_is_a_usage_error_not_an_empty_result(cli, stores):
    """Catches a typo that looked like a result: agreement of a sample that does not exist
    (exit 0, "0 claims"), a calibration slice by a column no trace has (a bogus
    [nosuchcol=None] slice), a gate on a slice value no trace has (exit 4, "no number")."""
    db = stores["bad"]
    cases = [
        (("agreement", "--sample", "nosuch"), "no sample named 'nosuch'"),
        (("calibration", "--judge", "prod-judge", "--by", "nosuchcol"), "unknown column or"),
        (
            ("gate", "--sample", "main", "--max-rate", "0.1", "--slice", "feature=hr_polcy"),
            "no trace of the sample's frame has feature='hr_polcy'; its values: billing_qa",
        ),
    ]
    for args, message in cases:
        result = cli(*args, db=db)
        assert result.code == 2 and message in result.err, (args, result.code, result.err)


def test_the_rates_table_prints_whole_slice_labels():
    """Catches labels cut at 40 characters: with --by feature,risk_category the risk category
    read 'risk_category=financ' and two slices could print alike."""
    import io

    from annotate.cli.rates import print_rows

    row = {"level": "claim", "estimator": "weighted_human", "n": 12, "rate": 0.25, "low": 0.1,
           "high": 0.5, "state": "ok"}  # fmt: skip
    rows = [
        {**row, "slice": {"feature": "code_assistant", "risk_category": "financial"}},
        {**row, "slice": {"feature": "code_assistant", "risk_category": "financial_advice"}},
        {**row, "slice": {"feature": "x" * 200}},
    ]
    out = io.StringIO()
    print_rows(rows, out)
    lines = out.getvalue().splitlines()
    assert "feature=code_assistant, risk_category=financial " in lines[1]
    assert "feature=code_assistant, risk_category=financial_advice " in lines[2]
    assert "x" * 80 in lines[3] and "x" * 200 not in lines[3] and "…" in lines[3]
    assert len({line.index(" claim ") for line in lines[1:]}) == 1  # the columns line up
