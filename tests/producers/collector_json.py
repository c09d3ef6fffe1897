"""OTLP export requests as an OpenTelemetry Collector's file exporter writes them: JSON Lines.

Owns the protobuf -> JSON step only: one export request a line, camelCase fields, enums as
integers, 64-bit integers as strings, and trace/span ids as lowercase hex (protobuf's own JSON
mapping writes bytes as base64; OTLP/JSON says hex). It must not build or alter spans.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

ID_FIELDS = frozenset({"traceId", "spanId", "parentSpanId"})


def export_line(request: Message) -> str:
    """One `{"resourceSpans": [...]}` or `{"resourceLogs": [...]}` line (no newline)."""
    data = json_format.MessageToDict(request, use_integers_for_enums=True)
    return json.dumps(hex_ids(data), separators=(",", ":"), ensure_ascii=False)


def hex_ids(value: Any) -> Any:
    """`value` with every trace/span id (base64 in protobuf JSON) as lowercase hex."""
    if isinstance(value, list):
        return [hex_ids(item) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: base64.b64decode(item).hex() if key in ID_FIELDS else hex_ids(item)
        for key, item in value.items()
    }
