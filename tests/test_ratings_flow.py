"""Ratings on a scale through the real store: imported judge ratings (JSON Lines, OTLP),
reviewers' ratings recorded blind and all-or-nothing, and the CLI's --criterion."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotate.accounts.users import add_user
from annotate.errors import UsageError
from annotate.ingest.importer import import_traces
from annotate.judge.rubrics.versions import edit_rubric, get_rubric
from annotate.labelling.assignment import assign
from annotate.labelling.blind import JudgeSeenError
from annotate.ratings.criteria import criteria_of
from annotate.ratings.record import RatingError, my_ratings, record_ratings
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import ratings as sql
from annotate.store import reveals

N = 30


def _rows(judge_scores: list[float]) -> list[dict]:
    rows = []
    for i, score in enumerate(judge_scores):
        rows.append(
            {
                "trace_id": f"r-{i:02d}",
                "feature": "billing" if i % 2 else "hr",
                "context": [f"Fact {i}."],
                "response": f"Answer {i}.",
                "judge": [{"judge": "geval", "level": "response", "ratings": {"relevance": score}}],
                "ratings": {"coherence": 4},
            }
        )
    return rows


@pytest.fixture
def rated_store(fresh_store, tmp_path: Path):
    rng = np.random.default_rng(4)
    truth = rng.integers(1, 6, N)
    a = np.clip(truth + rng.choice([-1, 0, 0, 1], N), 1, 5)
    b = np.clip(truth + rng.choice([-1, 0, 0, 0], N), 1, 5)
    judge = np.clip((a + b) / 2 + 0.5, 1, 5)
    path = tmp_path / "rated.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows(judge.tolist())))
    report = import_traces(fresh_store, path)
    assert report.imported == N and not report.errors
    draw_sample(fresh_store, SampleSpec(name="s", n=N, by=("feature",), seed=1))
    for name in ("ann", "bob"):
        add_user(fresh_store, name, "reviewer", "correct horse battery")
    assign(fresh_store, "s", ["ann", "bob"], per_trace=2)
    for name, scores in (("ann", a), ("bob", b)):
        for i, score in enumerate(scores):
            record_ratings(
                fresh_store, name, f"r-{i:02d}", {"relevance": int(score), "coherence": 4}
            )
    return fresh_store, a, b, judge


def test_version_1_has_relevance_and_coherence_and_an_edit_keeps_them(fresh_store):
    rubric = get_rubric(fresh_store, 1)
    assert [c["name"] for c in criteria_of(rubric)] == ["relevance", "coherence"]
    assert [level["score"] for level in criteria_of(rubric)[0]["levels"]] == [1, 2, 3, 4, 5]
    added = [
        *criteria_of(rubric),
        {**criteria_of(rubric)[0], "name": "completeness", "optional": True},
    ]
    edited = edit_rubric(fresh_store, 1, {"criteria": added}, "lena")
    assert [c["name"] for c in criteria_of(edited)][-1] == "completeness"
    assert edited.content_hash != rubric.content_hash  # the hash covers the criteria
    with pytest.raises(UsageError, match="scores must be consecutive"):
        broken = {
            **added[0],
            "levels": [{"score": 1, "definition": "x"}, {"score": 3, "definition": "y"}],
        }
        edit_rubric(fresh_store, 1, {"criteria": [broken]}, "lena")


def test_imported_ratings_land_per_judge_and_criterion(rated_store):
    store, _, _, judge = rated_store
    found = dict(sql.judge_scores(store, "geval", "relevance", None))
    assert [found[f"r-{i:02d}"] for i in range(N)] == pytest.approx(judge.tolist())
    assert {s for _, s in sql.judge_scores(store, "imported", "coherence", None)} == {4.0}
    assert stored_verdicts(store) == 0  # a verdict that only rates stores no label


def stored_verdicts(store) -> int:
    return store.scalar("SELECT count(*) FROM judge_verdicts")


def test_a_rating_is_checked_and_nothing_is_half_written(rated_store):
    store, *_ = rated_store
    before = store.scalar("SELECT count(*) FROM rating_events")
    with pytest.raises(RatingError, match="relevance must be a whole score from 1 to 5, got 6"):
        record_ratings(store, "ann", "r-00", {"coherence": 3, "relevance": 6})
    with pytest.raises(RatingError, match="coherence is not optional"):
        record_ratings(store, "ann", "r-00", {"coherence": None})
    with pytest.raises(UsageError, match="no criterion 'fluency'"):
        record_ratings(store, "ann", "r-00", {"fluency": 3})
    assert store.scalar("SELECT count(*) FROM rating_events") == before
    record_ratings(store, "ann", "r-00", {"relevance": 2})
    assert my_ratings(store, "ann", "r-00")["relevance"] == 2  # the latest event counts


def test_a_rating_after_seeing_the_judge_is_refused(rated_store):
    store, *_ = rated_store
    reveals.insert_reveal(store, "ann", "r-01")
    with pytest.raises(JudgeSeenError):
        record_ratings(store, "ann", "r-01", {"relevance": 1})


def test_cli_criterion_agreement_calibration_and_rates(rated_store, cli):
    store, a, b, judge = rated_store
    store.close()
    found = cli("agreement", "--criterion", "relevance", "--sample", "s", "--json").json()
    (pair,) = found["weighted_kappa_quadratic"]
    assert pair["value"] == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    assert found["krippendorff_alpha_ordinal"]["units"] == N
    calibration = cli(
        "calibration", "--judge", "geval", "--criterion", "relevance", "--sample", "s", "--json"
    ).json()
    assert calibration["mean_bias"]["value"] == pytest.approx(float(np.mean(judge - (a + b) / 2)))
    text = cli("rates", "--criterion", "relevance", "--sample", "s").out
    assert "design-weighted mean" in text and "feature=billing" in text
    rates = cli("rates", "--criterion", "relevance", "--sample", "s", "--json").json()
    mean = rates["overall"]["mean"]
    assert mean["value"] == pytest.approx(float(np.mean((a + b) / 2)))  # equal weights: n = N
    assert mean["low"] < mean["value"] < mean["high"]


def _otlp_span_with_rating(score_value: dict) -> dict:
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.request.model", "value": {"stringValue": "m-1"}},
        {"key": "gen_ai.completion", "value": {"stringValue": "Refunds take 5 days."}},
    ]
    event = {
        "name": "gen_ai.evaluation.result",
        "attributes": [
            {"key": "gen_ai.evaluation.name", "value": {"stringValue": "Relevance"}},
            {"key": "gen_ai.evaluation.score.value", "value": score_value},
            {"key": "annotate.judge", "value": {"stringValue": "geval-prod"}},
        ],
    }
    raw = {
        "traceId": "a1" * 16,
        "spanId": "b1" * 8,
        "name": "chat m-1",
        "startTimeUnixNano": "1772877600000000000",
        "attributes": attributes,
        "events": [event],
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [raw]}]}]}


def test_an_otlp_evaluation_with_a_name_and_a_score_is_a_rating(fresh_store, tmp_path):
    path = tmp_path / "otlp.jsonl"
    path.write_text(json.dumps(_otlp_span_with_rating({"doubleValue": 4.0})) + "\n")
    report = import_traces(fresh_store, path)
    assert report.imported == 1 and not report.errors
    rows = fresh_store.fetchall("SELECT judge, criterion, score FROM judge_ratings")
    assert rows == [("geval-prod", "relevance", 4.0)]


def test_a_rating_that_is_not_a_number_is_rejected_by_line_naming_the_field(fresh_store, tmp_path):
    path = tmp_path / "bad.jsonl"
    row = {"trace_id": "x", "context": ["c"], "response": "r", "ratings": {"relevance": "high"}}
    path.write_text(json.dumps(_rows([3.0])[0]) + "\n" + json.dumps(row) + "\n")
    report = import_traces(fresh_store, path)
    assert report.imported == 1
    (error,) = report.errors
    assert (error.line, error.field) == (2, "ratings.relevance")
    assert "must be a number" in error.message


def test_the_bundle_carries_the_ratings_and_still_verifies(rated_store, tmp_path):
    import zipfile

    from annotate.rates.bundle import build_bundle, verify_bundle

    store, a, b, judge = rated_store
    path = tmp_path / "bundle.zip"
    build_bundle(store, "s", path, resamples=200, actor="lena")
    checked = verify_bundle(path)
    assert checked["ok"], checked["problems"]
    document = json.loads(zipfile.ZipFile(path).read("ratings.json"))
    relevance = document["criteria"]["relevance"]
    assert relevance["judges"]["geval"]["mean_bias"]["value"] == pytest.approx(
        float(np.mean(judge - (a + b) / 2))
    )
    assert relevance["agreement"]["weighted_kappa_quadratic"][0]["value"] == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic")
    )


def test_the_report_shows_each_rated_criterion(rated_store):
    from annotate.ratings.document import ratings_document
    from annotate.report.ratings import ratings_blocks
    from annotate.report.render import render_markdown

    store, a, b, judge = rated_store
    document = ratings_document(store, "s", seed=0, repetitions=200)
    text = render_markdown("Report", ratings_blocks(document))
    assert "## Ratings on a scale" in text and "### Ratings: relevance" in text
    bias = document["criteria"]["relevance"]["judges"]["geval"]["mean_bias"]["value"]
    assert bias == pytest.approx(float(np.mean(judge - (a + b) / 2)))
    assert "geval against the reviewers' mean" in text
    assert ratings_blocks({"criteria": {}}) == []  # no rating: the report is unchanged


def test_criteria_travel_through_a_rubric_file(fresh_store, tmp_path):
    import yaml

    from annotate.judge.rubrics.exchange import export_yaml, import_rubric
    from annotate.ratings.criteria import criteria_call

    document = yaml.safe_load(export_yaml(fresh_store, 1))
    assert [c["name"] for c in document["rubric"]["criteria"]] == ["relevance", "coherence"]
    document["rubric"]["criteria_call"] = "separate"
    path = tmp_path / "rubric.yaml"
    path.write_text(yaml.safe_dump(document))
    imported = import_rubric(fresh_store, path, "lena")
    assert imported.version == 2 and criteria_call(imported) == "separate"
    document["rubric"]["criteria_call"] = "sometimes"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(UsageError, match="criteria_call must be one of off, with_claims, separate"):
        import_rubric(fresh_store, path, "lena")
