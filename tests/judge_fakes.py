"""A fake judge behind the fake Messages server: it reads the fenced context and claim out of
the request and answers a structured verdict (supported when the claim's amount is in the
context), so runs over many claims need no queued replies."""

from __future__ import annotations

import json
import re
from typing import Any

from fake_anthropic import Reply, message

_BLOCK = re.compile(r"<(context|claim)>\n(.*?)\n</\1>", re.S)


def blocks(request: dict[str, Any]) -> dict[str, str]:
    parts = []
    for turn in request["messages"]:
        content = turn["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [part["text"] for part in content if part["type"] == "text"]
    text = "\n".join(parts)
    return {tag: body for tag, body in _BLOCK.findall(text)}


def verdict_for(request: dict[str, Any]) -> dict[str, Any]:
    found = blocks(request)
    amounts = re.findall(r"\$\d+", found.get("claim", ""))
    context = found.get("context", "")
    ok = all(a in context for a in amounts)
    quote = context.split("] ", 1)[-1] if ok else ""
    return {
        "reasoning": "the amount matches" if ok else "the amount differs",
        "label": "supported" if ok else "contradicted",
        "error_type": "none" if ok else "number",
        "evidence": quote,
    }


def answer(request: dict[str, Any]) -> Reply:
    return Reply(200, message(json.dumps(verdict_for(request)), 300, 60))
