"""The producers harness itself: each producer's file is Collector-style OTLP JSON with real spans.

Pins, per producer, which span names and attribute keys carry the content, as the libraries
really emit them (tests/producers/README.md describes them). Not a test of our importer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.producers.traffic import KINDS, ORDER_RECORD, STREAMED

PRODUCERS = [
    "sdk_only",
    "openllmetry",
    "openllmetry_events",
    "openinference",
    "langfuse",
    "mlflow",
    "mlflow_genai",
]
SDK_SCOPE = "com.anthropic.sdk.python"


def exports(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def spans(path: Path) -> list[dict[str, Any]]:
    """Every span, with its scope's name under "scope"."""
    found = []
    for export in exports(path):
        for resource in export.get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                found += [{**s, "scope": scope["scope"]["name"]} for s in scope["spans"]]
    return found


def log_records(path: Path) -> list[dict[str, Any]]:
    found = []
    for export in exports(path):
        for resource in export.get("resourceLogs", []):
            for scope in resource["scopeLogs"]:
                found += scope["logRecords"]
    return found


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes as key -> the AnyValue's one value."""
    return {a["key"]: next(iter(a["value"].values()), None) for a in span.get("attributes", [])}


def named(path: Path, scope: str) -> list[dict[str, Any]]:
    return [s for s in spans(path) if s["scope"] == scope]


def text_of(spans_: list[dict[str, Any]]) -> str:
    return json.dumps([attrs(s) for s in spans_])


@pytest.mark.parametrize("producer", PRODUCERS)
def test_each_line_is_one_collector_style_export(produced, producer):
    for export in exports(produced(producer)):
        assert set(export) <= {"resourceSpans", "resourceLogs"} and len(export) == 1, export.keys()
    for span in spans(produced(producer)):
        assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"]), span["traceId"]
        assert re.fullmatch(r"[0-9a-f]{16}", span["spanId"]), span["spanId"]
        assert re.fullmatch(r"[0-9a-f]{16}|", span.get("parentSpanId", "")), span["parentSpanId"]
        assert isinstance(span["kind"], int) and isinstance(span["startTimeUnixNano"], str)
        for attribute in span.get("attributes", []):
            assert set(attribute) == {"key", "value"} and len(attribute["value"]) <= 1, attribute


@pytest.mark.parametrize("producer", PRODUCERS)
def test_the_sdk_span_is_there_for_every_call(produced, producer):
    sdk = [s for s in spans(produced(producer)) if s["scope"] == SDK_SCOPE]
    assert [s["name"] for s in sdk] == ["anthropic.messages.create"] * 5  # 4 kinds, 5 calls
    streamed = [s for s in sdk if attrs(s).get("gen_ai.request.stream")]
    assert len(streamed) == 1 and attrs(streamed[0])["gen_ai.request.model"] == "claude-haiku-4-5"
    assert len({s["traceId"] for s in spans(produced(producer))}) >= 4


@pytest.mark.parametrize("producer", PRODUCERS)
def test_the_tool_calls_two_sdk_spans_share_a_trace(produced, producer):
    sdk = [s for s in spans(produced(producer)) if s["scope"] == SDK_SCOPE]
    by_trace: dict[str, int] = {}
    for span in sdk:
        by_trace[span["traceId"]] = by_trace.get(span["traceId"], 0) + 1
    assert sorted(by_trace.values()) == [1, 1, 1, 2]


def test_the_sdk_alone_records_no_content(produced):
    assert not any(e.question in text_of(spans(produced("sdk_only"))) for e in KINDS.values())


def test_openllmetry_keeps_content_in_gen_ai_messages_attributes(produced):
    chats = named(produced("openllmetry"), "opentelemetry.instrumentation.anthropic")
    assert {s["name"] for s in chats} == {"anthropic.chat"} and len(chats) == 5
    keys = set().union(*(attrs(s) for s in chats))
    assert {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} <= keys
    assert {"gen_ai.tool.definitions", "gen_ai.request.model", "gen_ai.response.model"} <= keys
    streamed = next(s for s in chats if "gen_ai.system_instructions" in attrs(s))
    system = json.loads(attrs(streamed)["gen_ai.system_instructions"])
    assert system == [{"type": "text", "content": STREAMED.system}]
    output = json.loads(attrs(streamed)["gen_ai.output.messages"])
    assert output[0]["parts"][0] == {"type": "text", "content": STREAMED.answer}


def test_openllmetry_events_mode_puts_content_in_log_records(produced):
    path = produced("openllmetry_events")
    chats = named(path, "opentelemetry.instrumentation.anthropic")
    assert not any("gen_ai.input.messages" in attrs(s) for s in chats)
    records = log_records(path)
    names = {r["eventName"] for r in records}
    # the tool result arrives in a gen_ai.user.message (its role), never a gen_ai.tool.message
    assert names == {
        "gen_ai.system.message",
        "gen_ai.user.message",
        "gen_ai.assistant.message",
        "gen_ai.choice",
    }
    bodies = json.dumps([r["body"] for r in records])
    assert all(json.dumps(e.answer)[1:-1] in bodies for e in KINDS.values())
    assert all(re.fullmatch(r"[0-9a-f]{32}", r["traceId"]) for r in records if "traceId" in r)


def test_openinference_flattens_messages_into_indexed_attributes(produced):
    llm = named(produced("openinference"), "openinference.instrumentation.anthropic")
    assert sorted(s["name"] for s in llm) == ["messages.create"] * 4 + ["messages.stream"]
    keys = set().union(*(attrs(s) for s in llm))
    assert {
        "openinference.span.kind",
        "input.value",
        "output.value",
        "llm.model_name",
        "llm.input_messages.0.message.role",
        "llm.input_messages.0.message.content",
        "llm.input_messages.0.message.contents.0.message_content.type",
        "llm.input_messages.0.message.contents.0.message_content.text",
        "llm.input_messages.2.message.tool_call_id",
        "llm.output_messages.0.message.contents.0.message_content.text",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    } <= keys
    tool_turn = next(s for s in llm if "llm.input_messages.2.message.role" in attrs(s))
    assert attrs(tool_turn)["llm.input_messages.2.message.role"] == "tool"
    assert attrs(tool_turn)["llm.input_messages.2.message.content"] == ORDER_RECORD


def test_langfuse_observations_hold_question_documents_and_answer(produced):
    observed = named(produced("langfuse"), "langfuse-sdk")
    types = sorted(attrs(s)["langfuse.observation.type"] for s in observed)
    assert types == ["agent"] * 4 + ["generation"] * 5 + ["retriever"] * 3 + ["tool"]
    retriever = next(s for s in observed if attrs(s)["langfuse.observation.type"] == "retriever")
    assert {"langfuse.observation.input", "langfuse.observation.output"} <= set(attrs(retriever))
    generation = next(s for s in observed if attrs(s)["langfuse.observation.type"] == "generation")
    assert attrs(generation)["langfuse.observation.model.name"] == "claude-haiku-4-5"
    tool = next(s for s in observed if s["name"] == "lookup_order")
    assert attrs(tool)["langfuse.observation.output"] == ORDER_RECORD


def test_mlflow_keeps_inputs_and_outputs_as_json_strings(produced):
    observed = named(produced("mlflow"), "mlflow.tracing.provider")
    types = sorted(json.loads(attrs(s)["mlflow.spanType"]) for s in observed)
    # autolog does not record messages.stream: the streamed kind has no CHAT_MODEL span
    assert types == ["CHAIN"] * 4 + ["CHAT_MODEL"] * 4 + ["RETRIEVER"] * 3 + ["TOOL"]
    chat = next(s for s in observed if s["name"] == "Messages.create")
    assert {"mlflow.spanInputs", "mlflow.spanOutputs", "mlflow.llm.model"} <= set(attrs(chat))


def test_mlflow_genai_semconv_drops_the_app_spans_content(produced):
    observed = named(produced("mlflow_genai"), "mlflow.tracing.provider")
    chats = [s for s in observed if s["name"] == "chat claude-haiku-4-5"]
    assert len(chats) == 4
    assert all({"gen_ai.input.messages", "gen_ai.output.messages"} <= set(attrs(s)) for s in chats)
    tool = next(s for s in observed if s["name"] == "execute_tool lookup_order")
    assert json.loads(attrs(tool)["gen_ai.tool.call.result"]) == ORDER_RECORD
    retrievers = [s for s in observed if s["name"] == "RETRIEVER"]
    assert len(retrievers) == 3 and not any("mlflow.spanOutputs" in attrs(s) for s in retrievers)
