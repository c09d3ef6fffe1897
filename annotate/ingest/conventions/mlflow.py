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
from annotate.ingest.conventions.messages import decoded
from annotate.ingest.conventions.provider import body_view, model_of

TYPE, INPUTS, OUTPUTS = "mlflow.spanType", "mlflow.spanInputs", "mlflow.spanOutputs"
KINDS = {"LLM": LLM, "CHAT_MODEL": LLM, "RETRIEVER": RETRIEVAL, "TOOL": TOOL}


def follows(attributes: dict[str, Any]) -> bool:
    return TYPE in attributes and (INPUTS in attributes or OUTPUTS in attributes)


def view(attributes: dict[str, Any]) -> SpanView:
    kind = KINDS.get(str(decoded(attributes.get(TYPE))).upper(), OTHER)
    inputs, outputs = decoded(attributes.get(INPUTS)), decoded(attributes.get(OUTPUTS))
    return body_view(SpanView(kind, "mlflow", model=model_of(inputs)), inputs, outputs)
