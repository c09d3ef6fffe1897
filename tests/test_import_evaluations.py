"""Evaluation records in their own file, imported after the spans: they attach to the calls in
the store; one naming a span that is nowhere is rejected by line, naming the span id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import FIXTURES

from annotate.ingest.importer import import_traces
from annotate.store import open_store
from annotate.store.assignments import judge_names

TRACE_A, SPAN_A = "a1" * 16, "b1" * 8
TRACE_B, SPAN_B = "a2" * 16, "b2" * 8


def attrs(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in values.items()]


def span(trace: str, span_id: str, answer: str, response_id: str) -> dict[str, Any]:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m-1",
        "gen_ai.response.id": response_id,
        "gen_ai.completion": answer,
    }
    raw = {
        "traceId": trace,
        "spanId": span_id,
        "name": "chat m-1",
        "startTimeUnixNano": "1772877600000000000",
        "attributes": attrs(attributes),
    }
    return {"resourceSpans": [{"scopeSpans": [{"spans": [raw]}]}]}


def evaluation(label: str, trace: str = "", span_id: str = "", **extra: str) -> dict[str, Any]:
    record: dict[str, Any] = {
        "eventName": "gen_ai.evaluation.result",
        "attributes": attrs(
            {
                "gen_ai.evaluation.name": "prod-judge",
                "gen_ai.evaluation.score.label": label,
                **extra,
            }
        ),
    }
    if trace:
        record |= {"traceId": trace, "spanId": span_id}
    return {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}


def write(path: Path, *documents: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in documents))
    return path


def verdicts(store) -> list[tuple]:
    return store.fetchall(
        "SELECT trace_id, judge, level, label, import_id FROM judge_verdicts ORDER BY trace_id, label"
    )


def test_evaluations_in_a_later_file_attach_to_the_spans_in_the_store(fresh_store, tmp_path):
    spans = write(
        tmp_path / "spans.jsonl",
        span(TRACE_A, SPAN_A, "Refunds take 5 days.", "resp-a"),
        span(TRACE_B, SPAN_B, "Refunds take 9 days.", "resp-b"),
    )
    first = import_traces(fresh_store, spans)
    assert (first.imported, first.rejected) == (2, 0)
    logs = write(
        tmp_path / "logs.jsonl",
        evaluation("supported", TRACE_A, SPAN_A),
        evaluation("unsupported", **{"gen_ai.response.id": "resp-b"}),  # no span: by response id
        evaluation("supported", "a9" * 16, "b9" * 8),
    )
    report = import_traces(fresh_store, logs)
    assert (report.imported, report.attached, report.rejected) == (0, 2, 1)
    assert [str(e) for e in report.errors] == [
        "line 3: \"gen_ai.evaluation.result\" from 'prod-judge' names span b9b9b9b9b9b9b9b9 of "
        "trace a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9a9, which is neither in this file nor in the "
        "store; import the spans first (or export spans and evaluations to the same file)"
    ]
    assert verdicts(fresh_store) == [
        (TRACE_A, "prod-judge", "response", "supported", report.import_id),
        (TRACE_B, "prod-judge", "response", "unsupported", report.import_id),
    ]


def test_the_same_evaluation_file_twice_attaches_nothing_twice(fresh_store, tmp_path):
    import_traces(fresh_store, write(tmp_path / "s.jsonl", span(TRACE_A, SPAN_A, "Hi.", "r")))
    logs = write(tmp_path / "l.jsonl", evaluation("supported", TRACE_A, SPAN_A))
    import_traces(fresh_store, logs)
    again = import_traces(fresh_store, logs)
    assert (again.attached, again.duplicates, again.rejected) == (0, 1, 0)
    assert len(verdicts(fresh_store)) == 1


def test_a_bad_score_on_a_later_evaluation_is_rejected_by_its_field(fresh_store, tmp_path):
    import_traces(fresh_store, write(tmp_path / "s.jsonl", span(TRACE_A, SPAN_A, "Hi.", "r")))
    bad = evaluation("supported", TRACE_A, SPAN_A)
    record = bad["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    record["attributes"].append(
        {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": "NaN"}}
    )
    report = import_traces(fresh_store, write(tmp_path / "l.jsonl", bad))
    assert [str(e) for e in report.errors] == [
        'line 1: "gen_ai.evaluation.score.value" must be a finite number, got nan; write null '
        "(or leave it out) for no score"
    ]


def test_a_later_evaluation_with_a_score_that_is_not_a_number_is_rejected(fresh_store, tmp_path):
    import_traces(fresh_store, write(tmp_path / "s.jsonl", span(TRACE_A, SPAN_A, "Hi.", "r")))
    graded = evaluation("supported", TRACE_A, SPAN_A, **{"gen_ai.evaluation.score.value": "high"})
    report = import_traces(fresh_store, write(tmp_path / "l.jsonl", graded))
    assert [str(e) for e in report.errors] == [
        "line 1: \"gen_ai.evaluation.score.value\" must be a number, got a string ('high') on "
        "the evaluation from 'prod-judge'; record the score as a doubleValue or intValue, or "
        "leave it out: a grade such as 'high' belongs in gen_ai.evaluation.score.label"
    ]
    assert (report.attached, report.rejected) == (0, 1) and verdicts(fresh_store) == []


def test_our_own_exported_human_verdicts_are_refused_not_made_a_judge(tmp_path, cli):
    """Catches `annotate.human_review` becoming a judge when our export-otel file was
    imported again: with no other judge, rates picked it and reported sensitivity 1.000
    against the very gold it was made from."""
    db = tmp_path / "s.duckdb"
    assert cli("import", str(FIXTURES / "otlp" / "rag_export.jsonl"), db=db).code in (0, 1)
    assert cli("sample", "--name", "s", "--n", "3", "--by", "feature", db=db).code == 0
    assert cli("claims", "--sample", "s", "--extractor", "sentences", db=db).code == 0
    store = open_store(db)
    claims = store.fetchall("SELECT trace_id, claim_index FROM claims ORDER BY ALL")
    judges = judge_names(store)
    store.close()
    labels = write(tmp_path / "labels.jsonl", *(
        {"trace_id": t, "claim": i, "reviewer": "rita", "label": "supported"} for t, i in claims
    ))  # fmt: skip
    assert cli("import-labels", str(labels), db=db).code == 0
    out = tmp_path / "evaluations.jsonl"
    assert cli("export-otel", "--sample", "s", "--out", str(out), db=db).code == 0
    humans = [i for i, line in enumerate(out.read_text().splitlines(), start=1)
              if '"annotate.human_review"' in line]  # fmt: skip
    store = open_store(db)
    try:
        report = import_traces(store, out, "otlp")
        assert humans and report.rejected == len(humans)
        assert judge_names(store) == judges  # no judge was added
    finally:
        store.close()
    errors = [str(e) for e in report.errors]
    first = sorted({t for t, _ in claims})[0]
    assert errors[0] == (
        f"line {humans[0]}: \"gen_ai.evaluation.name\" is 'annotate.human_review': the record "
        f"of trace {first!r} (sample 's') is one of this app's own human verdicts, written by "
        "`annotate export-otel` from the reviewers' gold, not a judge's verdict; it is not "
        "imported (a judge scored against the gold it was made from agrees with it by "
        "construction). The labels it came from stay in the store that exported it; bring "
        "reviewers' claim labels with `annotate import-labels`"
    )
