"""The bundled sample data: byte-for-byte reproducible, valid input, and wrong where designed."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from conftest import ROOT

from annotate.demo.__main__ import main
from annotate.demo.generator import (
    DEFAULT_N,
    FEATURES,
    MODELS,
    TRACES_FILE,
    TRUTH_FILE,
    generate,
    write_sample,
)
from annotate.traces import KNOWN_FIELDS, Record, Trace, parse_record

DATA = ROOT / "data"
LABELS = {"supported", "partially_supported", "contradicted", "not_in_context", "not_a_claim"}
UNSUPPORTED = {"partially_supported", "contradicted", "not_in_context"}
ERROR_TYPES = {
    "entity",
    "number",
    "temporal",
    "relation",
    "negation",
    "overgeneralization",
    "causal",
    "attribution",
    "fabricated_detail",
    "other",
}
TRUTH_KEYS = [
    "trace_id",
    "claim",
    "text",
    "start",
    "end",
    "label",
    "error_type",
    "judge_label",
    "judge_correct",
]


@pytest.fixture(scope="module")
def sample() -> tuple[list[dict], list[dict]]:
    return generate()


@pytest.fixture(scope="module")
def traces(sample) -> list[dict]:
    return sample[0]


@pytest.fixture(scope="module")
def truth(sample) -> list[dict]:
    return sample[1]


@pytest.fixture(scope="module")
def by_trace(traces) -> dict[str, dict]:
    return {trace["trace_id"]: trace for trace in traces}


@pytest.fixture(scope="module")
def truth_by_trace(truth) -> dict[str, list[dict]]:
    rows: dict[str, list[dict]] = defaultdict(list)
    for row in truth:
        rows[row["trace_id"]].append(row)
    return rows


@pytest.fixture(scope="module")
def judgeable_truth(truth, by_trace) -> list[tuple[dict, dict]]:
    """(trace, truth row) for every claim of a trace that has context."""
    return [
        (by_trace[row["trace_id"]], row) for row in truth if by_trace[row["trace_id"]]["context"]
    ]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def claim_rate(labels: Iterable[str]) -> float:
    """unsupported / (supported + unsupported); not_a_claim is excluded."""
    judged = [label for label in labels if label != "not_a_claim"]
    return sum(label in UNSUPPORTED for label in judged) / len(judged)


def rates_by(pairs: list[tuple[dict, dict]], key: Callable[[dict], str]) -> dict[str, float]:
    labels: dict[str, list[str]] = defaultdict(list)
    for trace, row in pairs:
        labels[key(trace)].append(row["label"])
    return {name: claim_rate(values) for name, values in labels.items()}


def judge_rates(pairs: Iterable[tuple[dict, dict]]) -> tuple[float, float, int, int]:
    """Sensitivity, specificity and their denominators of the judge's claim-level labels."""
    caught = missed = passed = flagged = 0
    for _, row in pairs:
        if row["judge_correct"] is None:
            continue
        if row["label"] in UNSUPPORTED:
            caught += row["judge_correct"]
            missed += not row["judge_correct"]
        else:
            passed += row["judge_correct"]
            flagged += not row["judge_correct"]
    bad, good = caught + missed, passed + flagged
    return caught / max(1, bad), passed / max(1, good), bad, good


def test_generating_twice_gives_identical_rows(sample):
    assert generate() == sample


def test_another_seed_gives_other_rows():
    assert generate(40, seed=1) != generate(40, seed=2)


def test_bundled_files_are_exactly_what_the_generator_writes(tmp_path):
    traces_path, truth_path = write_sample(tmp_path)
    assert (traces_path.name, truth_path.name) == (TRACES_FILE, TRUTH_FILE)
    assert sha256(traces_path) == sha256(DATA / TRACES_FILE)
    assert sha256(truth_path) == sha256(DATA / TRUTH_FILE)


def test_bundled_traces_file_is_small_utf8_jsonl_in_a_fixed_key_order():
    raw = (DATA / TRACES_FILE).read_bytes()
    assert len(raw) < 6_000_000
    text = raw.decode("utf-8")
    assert "\\u" not in text and "€" in text  # non-ASCII written as itself
    assert "\r" not in text and text.endswith("}\n")
    first = json.loads(text.split("\n", 1)[0])
    assert list(first) == [key for key in KNOWN_FIELDS if key in first]
    truth_first = json.loads((DATA / TRUTH_FILE).read_text(encoding="utf-8").split("\n", 1)[0])
    assert list(truth_first) == TRUTH_KEYS


def test_cli_writes_both_files_for_the_asked_size_and_seed(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "out"), "--n", "30", "--seed", "7"]) == 0
    printed = capsys.readouterr().out
    assert TRACES_FILE in printed and TRUTH_FILE in printed
    lines = (tmp_path / "out" / TRACES_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 30
    again = write_sample(tmp_path / "again", n=30, seed=7)
    assert sha256(again[0]) == sha256(tmp_path / "out" / TRACES_FILE)
    assert sha256(again[1]) == sha256(tmp_path / "out" / TRUTH_FILE)


def test_sample_covers_features_risk_categories_and_models(traces):
    assert len(traces) == DEFAULT_N >= 2000
    assert {trace["feature"] for trace in traces} == set(FEATURES)
    assert len(FEATURES) >= 4
    assert len({trace["risk_category"] for trace in traces}) == 3
    assert {trace["model"] for trace in traces} == set(MODELS) and len(MODELS) == 3
    assert len({trace["trace_id"] for trace in traces}) == len(traces)


def test_strata_have_different_sizes_and_some_are_small(traces):
    sizes: dict[tuple[str, str], int] = defaultdict(int)
    features_of: dict[str, set[str]] = defaultdict(set)
    for trace in traces:
        sizes[trace["feature"], trace["risk_category"]] += 1
        features_of[trace["risk_category"]].add(trace["feature"])
    assert all(len(features) >= 3 for features in features_of.values())
    assert min(sizes.values()) < 50 < 500 < max(sizes.values())


def test_timestamps_are_fixed_ordered_and_span_about_sixty_days(traces):
    stamps = [trace["timestamp"] for trace in traces]
    assert stamps == sorted(stamps)
    assert stamps[0].startswith("2026-01-") and stamps[-1].startswith("2026-03-")


def test_every_row_parses_into_a_trace(traces):
    for line, row in enumerate(traces, start=1):
        parsed = parse_record(Record(line, row))
        assert isinstance(parsed, Trace), parsed


def test_given_claims_point_at_their_text_in_the_response(traces):
    with_claims = [trace for trace in traces if "claims" in trace]
    for trace in with_claims:
        for claim in trace["claims"]:
            assert trace["response"][claim["start"] : claim["end"]] == claim["text"]


def test_truth_has_one_row_per_sentence_with_exact_offsets(traces, truth_by_trace):
    for trace in traces:
        rows = truth_by_trace[trace["trace_id"]]
        assert [row["claim"] for row in rows] == list(range(len(rows)))
        assert all(list(row) == TRUTH_KEYS for row in rows)
        for row in rows:
            assert trace["response"][row["start"] : row["end"]] == row["text"]
        if "claims" in trace:
            assert [claim["text"] for claim in trace["claims"]] == [row["text"] for row in rows]


def test_sentences_split_cleanly_at_sentence_ends(traces, truth_by_trace):
    for trace in traces:
        sentences = re.split(r"(?<=[.!?])\s+", trace["response"])
        assert sentences == [row["text"] for row in truth_by_trace[trace["trace_id"]]]


def test_responses_have_two_to_six_sentences_and_contexts_up_to_four_items(traces, truth_by_trace):
    assert {len(truth_by_trace[trace["trace_id"]]) for trace in traces} == {2, 3, 4, 5, 6}
    assert {len(trace["context"]) for trace in traces} == {0, 1, 2, 3, 4}


def test_contexts_mix_plain_strings_and_sourced_objects(traces):
    items = [item for trace in traces for item in trace["context"]]
    sourced = [item for item in items if isinstance(item, dict)]
    assert 0.5 < len(sourced) / len(items) < 0.9
    assert all(set(item) == {"source", "text"} for item in sourced)
    assert any(re.search(r"\d", item["text"]) for item in sourced)


def test_about_two_percent_of_traces_have_an_empty_context(traces, truth_by_trace):
    empty = [trace for trace in traces if not trace["context"]]
    assert 0.01 <= len(empty) / len(traces) <= 0.035
    for trace in empty:
        labels = {row["label"] for row in truth_by_trace[trace["trace_id"]]}
        assert labels <= {"not_in_context", "not_a_claim"}
        assert not parse_record(Record(1, trace)).is_judgeable


def test_claims_are_given_for_half_to_seventy_percent_of_traces(traces):
    share = sum("claims" in trace for trace in traces) / len(traces)
    assert 0.5 <= share <= 0.7


def test_judge_verdicts_are_claim_level_when_claims_are_given_and_always_response_level(
    traces, truth_by_trace
):
    judged = [trace for trace in traces if "judge" in trace]
    assert 0.85 <= len(judged) / len(traces) <= 0.95
    for trace in judged:
        verdicts = trace["judge"]
        assert {verdict["judge"] for verdict in verdicts} == {"prod-judge-v3"}
        assert all(verdict["label"] in ("supported", "unsupported") for verdict in verdicts)
        assert all(0 <= verdict["score"] <= 1 for verdict in verdicts)
        assert [verdict["level"] for verdict in verdicts].count("response") == 1
        claim_level = [verdict for verdict in verdicts if verdict["level"] == "claim"]
        rows = truth_by_trace[trace["trace_id"]]
        if "claims" in trace:
            assert [verdict["claim"] for verdict in claim_level] == list(range(len(rows)))
            assert [verdict["label"] for verdict in claim_level] == [
                row["judge_label"] for row in rows
            ]
        else:
            assert claim_level == [] and {row["judge_label"] for row in rows} == {None}


def test_truth_labels_and_error_types_follow_the_default_rubric(truth, by_trace):
    assert {row["label"] for row in truth} == LABELS
    assert {row["error_type"] for row in truth} - {None} <= ERROR_TYPES
    assert len({row["error_type"] for row in truth} - {None}) >= 8
    for row in truth:
        if row["label"] in ("supported", "not_a_claim"):
            assert row["error_type"] is None
        elif by_trace[row["trace_id"]]["context"]:
            assert row["error_type"] in ERROR_TYPES
        if row["judge_label"] is None or row["label"] == "not_a_claim":
            assert row["judge_correct"] is None
        else:
            wrong = row["label"] in UNSUPPORTED
            assert row["judge_correct"] == ((row["judge_label"] == "unsupported") == wrong)


def test_some_code_answers_carry_literal_html_and_markdown(traces):
    code = [trace["response"] for trace in traces if trace["feature"] == "code_assistant"]
    assert sum('<div class="' in response for response in code) >= 5
    assert sum("**" in response for response in code) >= 5
    assert any("<script>" in response for response in code)


def test_text_is_varied_like_production_traffic(traces):
    assert len({trace["response"] for trace in traces}) > 0.95 * len(traces)
    assert len({trace["request"] for trace in traces}) > 0.6 * len(traces)
    assert len({trace["attributes"]["locale"] for trace in traces}) >= 3
    assert {trace["attributes"]["retriever"] for trace in traces} == {"bm25", "hybrid"}


def test_hallucination_rate_differs_by_feature_as_designed(judgeable_truth):
    rates = rates_by(judgeable_truth, lambda trace: trace["feature"])
    assert max(rates, key=rates.get) == "medical_info"
    assert min(rates, key=rates.get) == "hr_policy"
    assert max(rates.values()) - min(rates.values()) >= 0.05
    assert 0.06 <= claim_rate(row["label"] for _, row in judgeable_truth) <= 0.14


def test_hallucination_rate_differs_by_model_as_designed(judgeable_truth):
    rates = rates_by(judgeable_truth, lambda trace: trace["model"])
    assert rates["acme-mini-2025-11"] > rates["northwind-chat-8b"] > rates["acme-large-2026-02"]
    assert rates["acme-mini-2025-11"] - rates["acme-large-2026-02"] >= 0.04


def test_judge_misses_number_errors_in_billing_answers(judgeable_truth):
    def is_billing_number(row: dict, trace: dict) -> bool:
        return trace["feature"] == "billing_qa" and row["error_type"] == "number"

    blind = [(t, r) for t, r in judgeable_truth if is_billing_number(r, t)]
    rest = [
        (t, r)
        for t, r in judgeable_truth
        if r["label"] in UNSUPPORTED and not is_billing_number(r, t)
    ]
    blind_sensitivity, _, count, _ = judge_rates(blind)
    rest_sensitivity, _, _, _ = judge_rates(rest)
    assert count >= 20
    assert blind_sensitivity <= rest_sensitivity - 0.25


def test_judge_over_flags_correct_code_answers(judgeable_truth):
    code = [(t, r) for t, r in judgeable_truth if t["feature"] == "code_assistant"]
    other = [(t, r) for t, r in judgeable_truth if t["feature"] != "code_assistant"]
    _, code_specificity, _, count = judge_rates(code)
    _, other_specificity, _, _ = judge_rates(other)
    assert count >= 300
    assert code_specificity <= other_specificity - 0.1


def test_judge_is_worse_on_one_model(judgeable_truth):
    weak = [(t, r) for t, r in judgeable_truth if t["model"] == "northwind-chat-8b"]
    rest = [(t, r) for t, r in judgeable_truth if t["model"] != "northwind-chat-8b"]
    weak_sensitivity, weak_specificity, _, _ = judge_rates(weak)
    rest_sensitivity, rest_specificity, _, _ = judge_rates(rest)
    assert weak_sensitivity < rest_sensitivity - 0.05
    assert weak_specificity < rest_specificity - 0.03
