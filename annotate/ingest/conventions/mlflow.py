"""MLflow's tracing convention: mlflow.spanType (LLM, CHAT_MODEL, RETRIEVER, TOOL; others carry
no call), mlflow.spanInputs / mlflow.spanOutputs holding the call's arguments and result as
JSON (Anthropic- or OpenAI-shaped for a model call; a RETRIEVER's output a list of documents
{page_content, metadata, id}). MLflow writes every attribute value as JSON, so a string
arrives quoted. Spans written with MLFLOW_ENABLE_OTEL_GENAI_SEMCONV carry gen_ai.* instead
and are read by genai.
"""

from __future__ import annotations

from typing import Any

from annotate.ingest.conventions import LLM, OTHER, RETRIEVAL, TOOL, SpanView
from annotate.ingest.conventions.messages import as_text, decoded
from annotate.ingest.conventions.provider import (
    model_of,
    request_messages,
    response_id_of,
    response_messages,
)

TYPE, INPUTS, OUTPUTS = "mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs"
KINDS = {"LLM": LLM, "CHAT_MODEL": LLM, "RETRIEVER": RETRIEVAL, "TOOL": TOOL}


def follows(attributes: dict[str, Any]) -> bool:
    return TYPE in attributes and (INPUTS in attributes or OUTPUTS in attributes)


def view(attributes: dict[str, Any]) -> SpanView:
    kind = KINDS.get(str(decoded(attributes.get(TYPE))).upper(), OTHER)
    inputs, outputs = decoded(attributes.get(INPUTS)), decoded(attributes.get(OUTPUTS))
    found = SpanView(kind, "mlflow", model=model_of(inputs))
    if kind == LLM:
        found.inputs = request_messages(inputs)
        found.outputs = response_messages(outputs)
        found.response_id = response_id_of(outputs)
    elif kind == TOOL:
        found.tool_result = None if outputs is None else as_text(outputs)
    elif kind == RETRIEVAL:
        found.documents = documents_of(outputs)
    return found


def documents_of(value: Any) -> list[tuple[str | None, str]]:
    """Retrieved documents in the shapes tools record: LangChain/MLflow Documents
    ({page_content, metadata, id}), {text|content, id|source}, or plain strings."""
    value = decoded(value)
    if isinstance(value, dict):
        value = value.get("documents", [value])
    found = []
    for item in value if isinstance(value, list) else []:
        text: Any
        name: Any
        if isinstance(item, str):
            text, name = item, None
        elif isinstance(item, dict):
            text = item.get("page_content", item.get("text", item.get("content")))
            metadata: dict[str, Any] = (
                item["metadata"] if isinstance(item.get("metadata"), dict) else {}
            )
            name = item.get("id") or metadata.get("doc_uri") or item.get("source")
        else:
            continue
        if text is not None and as_text(text).strip():
            found.append((str(name) if name not in (None, "") else None, as_text(text)))
    return found
