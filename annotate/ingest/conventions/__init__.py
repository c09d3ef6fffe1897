"""The tracing conventions teams use, each read into one view of a span: what kind of span it
is (a model call, a retrieval, a tool), the messages a call was sent and answered, the
documents a retrieval returned, the result a tool gave. One module a convention (genai:
the OTel GenAI semantic conventions, OpenLLMetry's and the events form included;
openinference; mlflow; langfuse), chosen by the attributes a span carries. Pure: no files,
ids or span trees (annotate.ingest.otlp owns those).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotate.ingest.conventions.messages import Message

LLM, RETRIEVAL, TOOL, OTHER = "llm", "retrieval", "tool", "other"


@dataclass
class SpanView:
    kind: str  # LLM, RETRIEVAL, TOOL or OTHER
    convention: str
    inputs: list[Message] = field(default_factory=list)  # system instructions first
    outputs: list[Message] = field(default_factory=list)
    documents: list[tuple[str | None, str]] = field(default_factory=list)  # (id, text)
    tool_name: str | None = None
    tool_result: str | None = None
    model: str | None = None
    response_id: str | None = None  # the provider's id of the answer (msg_..., chatcmpl-...)

    @property
    def has_content(self) -> bool:
        return bool(self.inputs or self.outputs)


def view_of(attributes: dict[str, Any], events: list[tuple[str, Any]] | None = None) -> SpanView:
    """The span read by the convention its attributes follow."""
    from annotate.ingest.conventions import genai, langfuse, mlflow, openinference

    if openinference.follows(attributes):
        found = openinference.view(attributes)
    elif mlflow.follows(attributes):
        found = mlflow.view(attributes)
    elif langfuse.follows(attributes):
        found = langfuse.view(attributes)
    else:
        found = genai.view(attributes, events or [])
    response_id = attributes.get("gen_ai.response.id")
    if isinstance(response_id, str) and response_id:
        found.response_id = response_id
    return found
