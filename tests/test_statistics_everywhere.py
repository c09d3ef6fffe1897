"""Issue 12 on a real store: judge label mapping, disputed not_a_claim, response level,
undefined values, and one definition of every statistic by every route (library, CLI, report).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from labelling_data import prepare, write_labelling_traces
from test_agreement_references import RAW_4RATERS

from annotate.accounts.activity import activity
from annotate.agreement.calibration import calibration
from annotate.agreement.reliability import NOMINAL_STATS, PAIR_STATS, STATISTICS, agreement
from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.judge.labels import UnmappedJudgeLabelError, label_map, set_label
from annotate.labelling.adjudication import adjudicate
from annotate.labelling.evidence import load_evidence
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.stats import coefficients as stats
from annotate.stats.gold import response_gold, response_labels
from annotate.store import open_store

JUDGE = "prod-judge-v3"
FULL_LABELS = ["supported", "partially_supported", "contradicted", "not_in_context", "not_a_claim"]


def write_labels(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def label_rows(table, reviewers, units, code) -> list[dict]:
    """A units x raters table -> label rows for `import-labels` (None = not labelled)."""
    rows = []
    for (trace, claim), row in zip(units, table, strict=True):
        for reviewer, value in zip(reviewers, row, strict=True):
            if value is not None:
                rows.append(
                    {"trace_id": trace, "claim": claim, "reviewer": reviewer, "label": code[value]}
                )
    return rows


@pytest.fixture
def raw_4raters_store(fresh_store, tmp_path):
    """Gwet's raw_4raters (12 units x 4 raters, categories 1-5) as claims of the sample."""
    prepare(fresh_store, tmp_path)
    units = [(f"lt-{u // 3:03d}", u % 3) for u in range(12)]
    code = dict(zip([1, 2, 3, 4, 5], FULL_LABELS, strict=True))
    rows = label_rows(RAW_4RATERS, ["r1", "r2", "r3", "r4"], units, code)
    import_labels(fresh_store, write_labels(tmp_path / "raw.jsonl", rows))
    return fresh_store


def test_every_statistic_is_the_same_by_library_cli_and_report(raw_4raters_store, cli, tmp_path):
    # Labels 1-5 coded as the five rubric labels: the full scale is Gwet's raw_4raters table.
    code = dict(zip([1, 2, 3, 4, 5], FULL_LABELS, strict=True))
    table = [[None if v is None else code[v] for v in row] for row in RAW_4RATERS]
    library = {
        "percent_agreement": stats.percent_agreement(table).value,
        "fleiss_kappa": stats.fleiss_kappa(table).value,
        "gwet_ac1": stats.gwet_ac1(table).value,
        "krippendorff_alpha": stats.krippendorff_alpha(table).value,
        "brennan_prediger": stats.brennan_prediger(table).value,
        "conger_kappa": stats.conger_kappa(table).value,
    }
    assert round(library["fleiss_kappa"], 5) == 0.76117  # irrCAC, every unit with 2+ ratings
    assert round(library["gwet_ac1"], 5) == 0.77544  # irrCAC raw.py docstring
    document = agreement(raw_4raters_store, "demo", scale="full")
    raw_4raters_store.close()
    route = cli("agreement", "--sample", "demo", "--scale", "full", "--json").json()
    for name, value in library.items():
        assert document[name]["value"] == pytest.approx(value, abs=1e-6), name
        assert route[name]["value"] == pytest.approx(value, abs=1e-6), name
    assert route["units"] == 11 and route["single_rated_units"] == 1


def test_report_json_carries_the_same_agreement_numbers_as_the_cli(labelled_store, cli, tmp_path):
    labelled_store.close()
    out = tmp_path / "report"
    assert cli("report", "--judge", JUDGE, "--sample", "demo", "--out", str(out)).code == 0
    report = json.loads((out / "report.json").read_text())
    route = cli("agreement", "--sample", "demo", "--json").json()
    for name in (*STATISTICS, *PAIR_STATS):
        assert report["agreement"][name] == route[name], name
    calibration_route = cli("calibration", "--judge", JUDGE, "--sample", "demo", "--json").json()
    for name in ("sensitivity", "specificity", "cohen_kappa", "coverage"):
        assert report["calibration"][name] == calibration_route[name], name


def verdict_traces(path: Path, extra: dict[int, list[dict]]) -> Path:
    """The labelling traces with extra judge verdicts on some traces."""
    write_labelling_traces(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for index, verdicts in extra.items():
        rows[index]["judge"] += verdicts
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def build_store(store, tmp_path, extra: dict[int, list[dict]]):
    import_traces(store, verdict_traces(tmp_path / "traces.jsonl", extra))
    draw_sample(store, SampleSpec(name="demo", n=12, by=("feature",), seed=1))
    rows = []
    for t in range(12):
        for claim in range(3):
            label = "contradicted" if claim == 1 and t < 8 else "supported"
            for reviewer in ("alice", "bob"):
                rows.append(
                    {
                        "trace_id": f"lt-{t:03d}",
                        "claim": claim,
                        "reviewer": reviewer,
                        "label": label,
                    }
                )
    import_labels(store, write_labels(tmp_path / "labels.jsonl", rows))
    return store


@pytest.fixture
def labelled_store(fresh_store, tmp_path):
    return build_store(fresh_store, tmp_path, {})


def claim_verdict(claim: int, label: str) -> dict:
    return {"judge": JUDGE, "level": "claim", "claim": claim, "label": label}


def test_abstentions_never_change_sensitivity_or_specificity_and_are_reported(
    fresh_store, tmp_path
):
    extra = {
        0: [claim_verdict(0, "unknown"), claim_verdict(2, "abstain")],
        1: [claim_verdict(0, "error"), claim_verdict(2, "unknown")],
        9: [claim_verdict(0, "supported")],
    }
    store = build_store(fresh_store, tmp_path, extra)
    plain = build_store(_other(tmp_path), tmp_path / "p", {9: [claim_verdict(0, "supported")]})
    with_abstentions = calibration(store, JUDGE, "demo")
    without = calibration(plain, JUDGE, "demo")
    for name in ("sensitivity", "specificity", "confusion", "n"):
        assert with_abstentions[name] == without[name], name
    cover = with_abstentions["coverage"]
    assert (cover["abstained"], cover["answered"]) == (4, 13)
    assert cover["abstained_labels"] == {"unknown": 2, "abstain": 1, "error": 1}
    share = cover["abstained_share"]
    assert share["value"] == pytest.approx(4 / 17) and share["low"] < share["value"] < share["high"]
    assert without["coverage"]["abstained"] == 0


def _other(tmp_path: Path):
    from annotate.store import open_store

    (tmp_path / "p").mkdir()
    return open_store(tmp_path / "p" / "plain.duckdb")


def test_an_unmapped_label_stops_calibration_and_names_the_command(fresh_store, tmp_path, cli):
    store = build_store(fresh_store, tmp_path, {0: [claim_verdict(0, "true")]})
    with pytest.raises(UnmappedJudgeLabelError) as caught:
        calibration(store, JUDGE, "demo")
    message = str(caught.value)
    assert "'true' (1 verdict)" in message
    assert f"annotate judge-labels --judge {JUDGE} --set true=unsupported" in message
    store.close()
    out = tmp_path / "report"
    stopped = cli("report", "--judge", JUDGE, "--out", str(out))
    assert stopped.code == 2 and "'true'" in stopped.err and not out.exists()
    listed = cli("judge-labels", "--json").json()["labels"]
    assert {
        "judge": JUDGE,
        "label": "true",
        "verdicts": 1,
        "outcome": None,
        "source": "unmapped",
    } in listed
    assert cli("judge-labels", "--set", "true=supported").code == 0
    assert cli("report", "--judge", JUDGE, "--out", str(out)).code == 0
    mapped = {r["label"]: r for r in cli("judge-labels", "--json").json()["labels"]}
    assert mapped["true"]["outcome"] == "supported"
    assert mapped["true"]["source"].startswith("set by ")
    store = open_store(tmp_path / "annotate.duckdb")
    acts = activity(store, kind="setting")
    store.close()
    assert acts[-1]["subject"] == f"judge label {JUDGE}" and acts[-1]["origin"] == "cli"
    bad = cli("judge-labels", "--set", "true=maybe")
    assert bad.code == 2 and "supported, unsupported, abstained" in bad.err
    # every --set or none: a bad second one used to leave the first saved, with exit 2
    both = cli("judge-labels", "--set", "true=unsupported", "--set", "true=maybe")
    assert both.code == 2
    mapped = {r["label"]: r for r in cli("judge-labels", "--json").json()["labels"]}
    assert mapped["true"]["outcome"] == "supported"


def test_a_lead_can_map_only_labels_the_judge_used(labelled_store):
    assert label_map(labelled_store, JUDGE) == {"unsupported": "unsupported"}
    with pytest.raises(Exception, match="never used the label 'grounded'"):
        set_label(labelled_store, JUDGE, "grounded", "supported", "lena")


def test_disputed_not_a_claim_is_a_third_category_at_the_binary_scale(fresh_store, tmp_path):
    # 6 claims; on 2 one reviewer says not_a_claim, the other contradicted; one claim both
    # call not_a_claim (excluded by all: left out).
    prepare(fresh_store, tmp_path)
    pairs = [
        ("supported", "supported"),
        ("supported", "supported"),
        ("contradicted", "contradicted"),
        ("not_a_claim", "contradicted"),
        ("contradicted", "not_a_claim"),
        ("supported", "supported"),
        ("not_a_claim", "not_a_claim"),
    ]
    rows = []
    for u, (a, b) in enumerate(pairs):
        unit = {"trace_id": f"lt-{u // 3:03d}", "claim": u % 3}
        rows += [{**unit, "reviewer": "alice", "label": a}, {**unit, "reviewer": "bob", "label": b}]
    import_labels(fresh_store, write_labels(tmp_path / "l.jsonl", rows))
    result = agreement(fresh_store, "demo", scale="binary")
    assert result["units"] == 6
    assert result["percent_agreement"]["value"] == pytest.approx(4 / 6)
    assert result["krippendorff_alpha"]["value"] < 1.0
    assert result["prevalence"]["labels"]["excluded"] == pytest.approx(2 / 12)


def test_response_gold_agreement_and_rate_use_one_definition(fresh_store, tmp_path):
    # lt-000: alice flags claim 0, bob claim 1: both say the response is unsupported, so they
    # agree at response level and the response's gold is unsupported.
    # lt-001: alice flags claim 2, bob says all supported: disagreement, no gold.
    # lt-002: both all supported.
    prepare(fresh_store, tmp_path)
    given = {
        "lt-000": (["contradicted", "supported", "supported"], ["supported", "contradicted", "supported"]),
        "lt-001": (["supported", "supported", "contradicted"], ["supported"] * 3),
        "lt-002": (["supported"] * 3, ["supported"] * 3),
    }  # fmt: skip
    rows = [
        {"trace_id": t, "claim": c, "reviewer": r, "label": labels[c]}
        for t, (a, b) in given.items()
        for r, labels in (("alice", a), ("bob", b))
        for c in range(3)
    ]
    import_labels(fresh_store, write_labels(tmp_path / "l.jsonl", rows))
    evidence = load_evidence(fresh_store, "demo")
    gold = response_gold(evidence)
    assert gold == {"lt-000": "unsupported", "lt-002": "supported"}
    labels = response_labels(evidence)
    agreed = {t for t in labels["alice"] if labels["alice"][t] == labels["bob"].get(t)}
    assert agreed == set(gold)  # a response has gold exactly when the reviewers agree on it
    result = agreement(fresh_store, "demo", level="response")
    assert result["units"] == 3 and result["percent_agreement"]["value"] == pytest.approx(2 / 3)
    summary = calibration(fresh_store, JUDGE, "demo", level="response")["gold"]
    assert summary["rate"]["value"] == pytest.approx(1 / 2) and summary["units_with_gold"] == 2
    # Adjudicating lt-001's disputed claim settles the response for everyone: supported.
    adjudicate(fresh_store, "lena", "lt-001", 2, "supported", "the context states it")
    after = response_gold(load_evidence(fresh_store, "demo"))
    assert after == {"lt-000": "unsupported", "lt-001": "supported", "lt-002": "supported"}
    assert agreement(fresh_store, "demo", level="response")["percent_agreement"]["value"] == (
        pytest.approx(2 / 3)  # agreement is between the reviewers' own labels: unchanged
    )


def test_undefined_values_are_null_with_a_reason_in_every_json(fresh_store, tmp_path, cli):
    # Every gold label is supported: kappa, sensitivity and balanced accuracy are undefined.
    prepare(fresh_store, tmp_path)
    rows = [
        {"trace_id": f"lt-{t:03d}", "claim": c, "reviewer": r, "label": "supported"}
        for t in range(12)
        for c in range(3)
        for r in ("alice", "bob")
    ]
    import_labels(fresh_store, write_labels(tmp_path / "l.jsonl", rows))
    fresh_store.close()
    document = cli("calibration", "--judge", JUDGE, "--sample", "demo", "--json").json()
    for name in ("sensitivity", "cohen_kappa", "balanced_accuracy"):
        assert document[name]["value"] is None, name
        assert document[name]["reason"], name
    assert "unsupported gold" in document["sensitivity"]["reason"]
    agreement_json = cli("agreement", "--sample", "demo", "--json").json()
    for name in NOMINAL_STATS:
        if name != "percent_agreement":
            assert agreement_json[name]["value"] is None and agreement_json[name]["reason"]
    out = tmp_path / "r"
    assert cli("report", "--judge", JUDGE, "--sample", "demo", "--out", str(out)).code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["calibration"]["cohen_kappa"]["value"] is None
    assert report["calibration"]["cohen_kappa"]["reason"]
    assert "undefined: " in (out / "report.md").read_text()
    for document_ in (document, agreement_json, report):
        assert not list(unexplained_nulls(document_))


def unexplained_nulls(node, path="$"):
    """Every statistic (a dict with "value") whose value or interval is null without a reason."""
    if isinstance(node, dict):
        is_stat = "value" in node and "units" in node
        missing = is_stat and (node["value"] is None or node.get("low") is None)
        if missing and not node.get("reason"):
            yield path
        for key, child in node.items():
            yield from unexplained_nulls(child, f"{path}.{key}")
    elif isinstance(node, list):
        for i, child in enumerate(node):
            yield from unexplained_nulls(child, f"{path}[{i}]")


def test_a_reviewer_with_few_shared_units_is_not_flagged(fresh_store, tmp_path, cli):
    prepare(fresh_store, tmp_path)
    rows = []
    for t in range(12):
        for c in range(3):
            unit = {"trace_id": f"lt-{t:03d}", "claim": c}
            rows += [{**unit, "reviewer": r, "label": "supported"} for r in ("ann", "ben")]
    rows += [
        {"trace_id": f"lt-00{t}", "claim": 0, "reviewer": "dee", "label": "contradicted"}
        for t in range(2)
    ]
    import_labels(fresh_store, write_labels(tmp_path / "l.jsonl", rows))
    result = agreement(fresh_store, "demo")
    dee = next(r for r in result["per_reviewer"] if r["reviewer"] == "dee")
    assert dee["flags"] == [] and dee["shared_units"] == 2
    assert dee["note"] == "too few shared units (2 < 20) to flag"
    fresh_store.close()
    lowered = cli("agreement", "--sample", "demo", "--min-shared-units", "2", "--json").json()
    dee = next(r for r in lowered["per_reviewer"] if r["reviewer"] == "dee")
    assert dee["flags"] and lowered["min_shared_units"] == 2
