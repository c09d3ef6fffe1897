"""The check on an OpenTelemetry span: with a real SDK tracer, the current span carries
grounded_answer and a gen_ai.evaluation.result event named by the rubric; exported as OTLP JSON
and brought back with `annotate import`, it is judge check-v{hash}'s verdict on that trace."""

# ruff: noqa: F811 - the export_path fixture is imported by name
from __future__ import annotations

from conftest import stored
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from rubric_data import trace_rows
from test_check import export_path  # noqa: F401 - the module's calibrated export, a fixture

from annotate.check import GroundingCheck
from tests.producers.collector_json import export_line


def traced_answers(export_path, rows):
    """An app's chat spans, each checked while it is the current span; the finished spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("production-app")
    check = GroundingCheck.from_export(export_path, baseline=True, tracer=tracer)
    results = []
    for row in rows:
        with tracer.start_as_current_span("chat m-1") as span:
            span.set_attributes({
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m-1",
                "gen_ai.response.id": f"resp-{row['trace_id']}",
                "gen_ai.completion": row["response"],
            })  # fmt: skip
            context = [doc["text"] for doc in row["context"]]
            results.append(
                check.check(row["response"], context, response_id=f"resp-{row['trace_id']}")
            )
    provider.shutdown()
    return results, exporter.get_finished_spans()


def test_the_span_carries_grounded_answer_and_the_evaluation_event(export_path):
    results, spans = traced_answers(export_path, trace_rows(2))
    assert [s.attributes["grounded_answer"] for s in spans] == [False, True]
    events = [event for s in spans for event in s.events]
    assert [e.name for e in events] == ["gen_ai.evaluation.result"] * 2
    first = events[0].attributes
    assert first["gen_ai.evaluation.name"] == results[0].judge
    assert (first["gen_ai.evaluation.score.label"], first["gen_ai.evaluation.score.value"]) == (
        "unsupported",
        0.0,
    )
    assert "The amount due is $47." in first["gen_ai.evaluation.explanation"]
    assert (
        first["annotate.check.held_out_sensitivity"] == results[0].held_out["sensitivity"]["value"]
    )


def test_the_exported_spans_import_back_as_judge_check_v(export_path, tmp_path, cli, db_path):
    results, spans = traced_answers(export_path, trace_rows(3))
    otlp = tmp_path / "production.jsonl"
    otlp.write_text(export_line(encode_spans(spans)) + "\n")
    done = cli("import", str(otlp))
    assert done.code == 0, done.err
    rows = stored(
        db_path,
        "SELECT t.response, v.judge, v.level, v.label FROM judge_verdicts v "
        "JOIN traces t USING (trace_id) ORDER BY v.label, t.response",
    )
    judge = results[0].judge
    assert (
        judge.startswith("check-v") and judge == f"check-v{results[0].rubric['content_hash'][:12]}"
    )
    expected = sorted(
        (row["response"], judge, "response", r.label)
        for row, r in zip(trace_rows(3), results, strict=True)
    )
    assert sorted(rows) == expected
    assert [r.label for r in results] == ["unsupported", "supported", "supported"]
