"""Langfuse's OTel attributes: langfuse.observation.type (generation; retriever; tool; span,
agent and the rest carry no call), langfuse.observation.input / .output as JSON (a
generation's messages or request body and its answer; a retriever's documents; a tool's
result), langfuse.observation.model.name.
"""

from __future__ import annotations

from typing import Any

from annotate.ingest.conventions import LLM, OTHER, RETRIEVAL, TOOL, SpanView
from annotate.ingest.conventions.messages import decoded
from annotate.ingest.conventions.provider import body_view, model_of

TYPE = "langfuse.observation.type"
INPUT, OUTPUT = "langfuse.observation.input", "langfuse.observation.output"
KINDS = {"generation": LLM, "retriever": RETRIEVAL, "tool": TOOL}


def follows(attributes: dict[str, Any]) -> bool:
    return TYPE in attributes


def view(attributes: dict[str, Any]) -> SpanView:
    kind = KINDS.get(str(attributes.get(TYPE)).lower(), OTHER)
    inputs, outputs = decoded(attributes.get(INPUT)), decoded(attributes.get(OUTPUT))
    model = attributes.get("langfuse.observation.model.name")
    found = SpanView(kind, "langfuse", model=model if isinstance(model, str) else model_of(inputs))
    return body_view(found, inputs, outputs)
