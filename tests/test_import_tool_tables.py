"""The tracing tools' own tables (tests/fixtures/tools, real Phoenix 20.26 and MLflow 3.17
exports) import with no flag: each trace's request, answer and context exactly as sent, the
tools' judge results as verdicts that can be calibrated, a person's results reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from annotate.ingest import detect_format
from annotate.ingest.importer import import_traces
from annotate.judge.labels import label_map, mapping_rows, set_label

TOOLS = FIXTURES / "tools"
# The traffic make_exports.py sent (README.md): request -> (answer, documents / tool result)
RETURNS = "How many days do I have to return an unopened item?"
PRO_PLAN = "Does the Pro plan include phone support?"
ORDER = "Where is my order A-1042?"
SENT = {
    RETURNS: (
        "You have 30 days from delivery to return an unopened item for a full refund.",
        [
            "Returns: unopened items can be returned within 30 days of delivery for a full refund.",
            "Opened items can be exchanged within 14 days; refunds are not given for opened items.",
        ],
    ),
    PRO_PLAN: (
        "Yes, the Pro plan includes 24/7 phone support.",
        [
            "The Pro plan includes email support with a 24-hour response time.",
            "Phone support is available on the Enterprise plan only.",
        ],
    ),
    ORDER: (
        "Your order A-1042 has shipped with DHL and should arrive on 12 March 2026.",
        ['{"order_id": "A-1042", "status": "shipped", "carrier": "DHL", "eta": "2026-03-12"}'],
    ),
}
PHOENIX_SPANS = ["spans.parquet", "spans.jsonl", "spans_get_spans.json"]
PHOENIX_ANNOTATIONS = ["span_annotations.parquet", "span_annotations.jsonl"]
PHOENIX_CONTEXT = ["input_output_context.parquet", "input_output_context.jsonl"]
MLFLOW = ["mlflow_traces.parquet", "mlflow_traces.jsonl"]
PHOENIX_JUDGE = "LLM/hallucination"
MLFLOW_JUDGE = "anthropic:/claude-haiku-4-5/groundedness"
CODE_JUDGE = "cites_context/mentions_number"
HUMAN_NOTICE = "is a HUMAN assessment by"


def stored_texts(store) -> dict[str, tuple[str, list[str]]]:
    """request -> (response, context texts in order), as the store holds them."""
    rows = store.fetchall("SELECT trace_id, request, response FROM traces")
    found = {}
    for trace_id, request, response in rows:
        texts = store.fetchall(
            "SELECT text FROM contexts WHERE trace_id = ? ORDER BY position", [trace_id]
        )
        found[request] = (response, [text for (text,) in texts])
    return found


def stored_verdicts(store) -> set[tuple[str, str, str, float | None, str | None]]:
    """(request, judge, label, score, explanation) of every stored judge verdict."""
    rows = store.fetchall(
        "SELECT t.request, v.judge, v.label, v.score, v.explanation "
        "FROM judge_verdicts v JOIN traces t USING (trace_id)"
    )
    return set(rows)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [(name, "phoenix_spans") for name in PHOENIX_SPANS]
    + [(name, "phoenix_annotations") for name in PHOENIX_ANNOTATIONS]
    + [(name, "phoenix_context") for name in PHOENIX_CONTEXT]
    + [(name, "mlflow") for name in MLFLOW],
)
def test_each_export_is_told_by_its_columns(name: str, fmt: str) -> None:
    with open(TOOLS / name, "rb") as fh:
        assert detect_format(fh, name) == fmt
        assert fh.tell() == 0


@pytest.mark.parametrize("name", PHOENIX_SPANS)
def test_phoenix_spans_import_each_call_as_sent(fresh_store, name: str) -> None:
    report = import_traces(fresh_store, TOOLS / name)
    assert report.format == "phoenix_spans"
    assert [str(error) for error in report.errors] == []
    assert (report.imported, report.rejected) == (3, 0)
    assert stored_texts(fresh_store) == SENT


@pytest.mark.parametrize("name", PHOENIX_SPANS)
def test_phoenix_spans_import_through_the_cli_with_no_flag(cli, name: str) -> None:
    result = cli("import", str(TOOLS / name))
    assert result.code == 0, result.err
    assert "(phoenix_spans): imported 3, rejected 0" in result.out + result.err


@pytest.mark.parametrize("name", PHOENIX_CONTEXT)
def test_phoenix_input_output_context_rows_are_traces(fresh_store, name: str) -> None:
    report = import_traces(fresh_store, TOOLS / name)
    assert [str(error) for error in report.errors] == []
    assert (report.imported, report.rejected) == (2, 0)
    rag = {request: SENT[request] for request in (RETURNS, PRO_PLAN)}
    assert stored_texts(fresh_store) == rag


@pytest.mark.parametrize("name", PHOENIX_ANNOTATIONS)
def test_phoenix_llm_annotations_become_verdicts_of_the_calls(fresh_store, name: str) -> None:
    import_traces(fresh_store, TOOLS / "spans.parquet")
    report = import_traces(fresh_store, TOOLS / name)
    assert report.attached == 3
    assert stored_verdicts(fresh_store) == {
        (RETURNS, PHOENIX_JUDGE, "factual", 0.0, "The 30 days are in document 1."),
        (PRO_PLAN, PHOENIX_JUDGE, "hallucinated", 1.0, "Phone support is Enterprise only."),
        (ORDER, PHOENIX_JUDGE, "factual", 0.0, "Matches the tool result."),
    }
    # the person's "correctness" is not a judge: a warning on its own row, nothing rejected
    assert report.is_clean and report.errors == []
    assert [(w.line, w.field) for w in report.warnings] == [(1, "annotator_kind")]
    assert "'correctness' " + HUMAN_NOTICE in report.warnings[0].message
    assert "annotate import-labels" in report.warnings[0].message


def test_phoenix_judge_can_be_calibrated(fresh_store) -> None:
    import_traces(fresh_store, TOOLS / "spans.jsonl")
    import_traces(fresh_store, TOOLS / "span_annotations.jsonl")
    used = {(r["judge"], r["label"]): r["outcome"] for r in mapping_rows(fresh_store)}
    assert used == {
        (PHOENIX_JUDGE, "hallucinated"): "unsupported",
        (PHOENIX_JUDGE, "factual"): None,
    }
    set_label(fresh_store, PHOENIX_JUDGE, "factual", "supported", "lead")
    assert label_map(fresh_store, PHOENIX_JUDGE) == {
        "factual": "supported",
        "hallucinated": "unsupported",
    }


@pytest.mark.parametrize("name", MLFLOW)
def test_mlflow_traces_import_each_call_as_sent(fresh_store, name: str) -> None:
    report = import_traces(fresh_store, TOOLS / name)
    assert report.format == "mlflow"
    assert report.imported == 3
    assert stored_texts(fresh_store) == SENT


@pytest.mark.parametrize("name", MLFLOW)
def test_mlflow_judge_and_code_assessments_are_verdicts(fresh_store, name: str) -> None:
    report = import_traces(fresh_store, TOOLS / name)
    assert stored_verdicts(fresh_store) == {
        (RETURNS, MLFLOW_JUDGE, "true", None, "Document 1 gives the 30 days."),
        (PRO_PLAN, MLFLOW_JUDGE, "false", None, "Phone support is Enterprise only."),
        (ORDER, MLFLOW_JUDGE, "true", None, "Matches the tool result."),
        (RETURNS, CODE_JUDGE, "true", None, None),
    }
    # alice's HUMAN assessment of the Pro plan answer (row 2) is a warning there, nothing else
    assert report.is_clean and report.errors == []
    assert [(w.line, w.field) for w in report.warnings] == [(2, "assessments[1]")]
    assert f"'correctness' {HUMAN_NOTICE} alice@example.com" in report.warnings[0].message


def test_mlflow_judges_can_be_calibrated(fresh_store) -> None:
    import_traces(fresh_store, TOOLS / "mlflow_traces.parquet")
    judges = {r["judge"] for r in mapping_rows(fresh_store)}
    assert judges == {MLFLOW_JUDGE, CODE_JUDGE}
    # true/false mean nothing until a lead says what the judge was asked
    set_label(fresh_store, MLFLOW_JUDGE, "true", "supported", "lead")
    set_label(fresh_store, MLFLOW_JUDGE, "false", "unsupported", "lead")
    assert label_map(fresh_store, MLFLOW_JUDGE) == {"true": "supported", "false": "unsupported"}


def test_a_phoenix_llm_span_without_output_is_reported_on_its_row(fresh_store, tmp_path) -> None:
    rows = [json.loads(line) for line in (TOOLS / "spans.jsonl").read_text().splitlines()]
    answered = next(
        number
        for number, row in enumerate(rows, start=1)
        if row["span_kind"] == "LLM"
        and PRO_PLAN in json.dumps(row["attributes.llm.input_messages"])
    )
    row = rows[answered - 1]
    row["attributes.llm.output_messages"] = None
    row["attributes.output.value"] = None
    path = write_jsonl(tmp_path / "spans.jsonl", rows)
    report = import_traces(fresh_store, path)
    assert report.imported == 2 and report.rejected == 1
    (error,) = report.errors
    assert error.line == answered
    assert row["context.span_id"] in error.message
    assert set(stored_texts(fresh_store)) == {RETURNS, ORDER}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path
