"""Deterministic synthetic traces in the generic JSONL shape, written as a stream.

Rows are built one at a time from a seeded random.Random and written straight to
disk, so a million-row file never sits in memory. Nothing here imports annotate.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

FEATURES = ("support_chat", "search_answer", "doc_summary", "email_draft")
RISK_CATEGORIES = ("low", "medium", "high")
MODELS = ("claude-sonnet-4-5", "gpt-4.1", "llama-3.3-70b")
LABELS = ("supported", "unsupported", "contradicted")
_START = datetime(2026, 1, 1)
_VOCABULARY = (
    "account billing invoice refund policy customer order shipment warranty device "
    "battery firmware update release version support agent ticket escalation region "
    "contract renewal discount subscription plan premium standard limit quota usage "
    "report dashboard export import schedule meeting deadline quarter revenue growth "
    "the a an of to in for on with by from after before during within under over "
    "is are was were will can may should must has have had does did not only also "
    "new old current previous monthly annual daily weekly first second third final"
)


def _sentence_pool(rng: random.Random, size: int = 3000) -> list[str]:
    vocabulary = _VOCABULARY.split()
    pool = []
    for _ in range(size):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(8, 20))]
        pool.append(" ".join(words).capitalize() + ".")
    return pool


def _text(rng: random.Random, pool: list[str], low: int, high: int) -> str:
    """Whole sentences until the text is between about `low` and `high` characters."""
    target = rng.randint(low, high)
    parts: list[str] = []
    length = 0
    while length < target:
        sentence = rng.choice(pool)
        parts.append(sentence)
        length += len(sentence) + 1
    return " ".join(parts)


def _contexts(rng: random.Random, pool: list[str], homogeneous: bool = False) -> list[Any]:
    items: list[Any] = []
    for index in range(rng.randint(2, 3)):
        text = _text(rng, pool, 300, 800)
        if rng.random() < 0.5 and not homogeneous:
            items.append(text)
        else:
            items.append({"source": f"kb://article/{rng.randint(1, 50_000)}#{index}", "text": text})
    return items


def _claims(response: str) -> list[dict[str, Any]]:
    """Each sentence of the response is a claim, with its character offsets."""
    claims = []
    start = 0
    for sentence in response.split(". "):
        text = sentence if sentence.endswith(".") else sentence + "."
        end = min(start + len(text), len(response))
        claims.append({"text": text, "start": start, "end": end})
        start = end + 1
    return claims


def _judge(
    rng: random.Random, claims: list[dict[str, Any]], homogeneous: bool = False
) -> list[dict[str, Any]]:
    verdicts: list[dict[str, Any]] = [
        {
            "judge": "groundedness-v3",
            "level": "response",
            "label": rng.choice(LABELS),
            "score": round(rng.random(), 3),
        }
    ]
    for index in range(len(claims)):
        verdicts.append(
            {
                "judge": "groundedness-v3",
                "level": "claim",
                "claim": index,
                "label": rng.choice(LABELS),
                "score": round(rng.random(), 3),
                "explanation": "The context does not mention this."
                if rng.random() < 0.3 or homogeneous
                else None,
            }
        )
    return verdicts


def _row(
    rng: random.Random, pool: list[str], index: int, homogeneous: bool = False
) -> dict[str, Any]:
    response = _text(rng, pool, 250, 350)
    row: dict[str, Any] = {
        "trace_id": f"tr-{index:08d}-{rng.getrandbits(32):08x}",
        "timestamp": (_START + timedelta(seconds=index * 7 + rng.randint(0, 6))).isoformat() + "Z",
        "feature": rng.choice(FEATURES),
        "risk_category": rng.choice(RISK_CATEGORIES),
        "model": rng.choice(MODELS),
        "request": _text(rng, pool, 40, 200),
        "context": _contexts(rng, pool, homogeneous),
        "response": response,
    }
    claims = _claims(response) if rng.random() < 0.5 or homogeneous else []
    if claims:
        row["claims"] = claims
    if rng.random() < 0.85 or homogeneous:
        row["judge"] = _judge(rng, claims, homogeneous)
    row["attributes"] = {
        "latency_ms": rng.randint(200, 9000),
        "tokens_in": rng.randint(300, 4000),
        "tokens_out": rng.randint(50, 600),
        "user_tier": rng.choice(("free", "pro", "enterprise")),
        "session_id": f"s-{rng.getrandbits(40):010x}",
    }
    return row


def generate_rows(
    count: int, seed: int = 20260301, homogeneous: bool = False
) -> Iterator[dict[str, Any]]:
    """Rows of mixed shape (string and object contexts, claims and judge sometimes absent), or
    `homogeneous`: every row shaped the same, as a production export writes them (object
    contexts, claims, a judge verdict for the response and each claim, every explanation)."""
    rng = random.Random(seed)
    pool = _sentence_pool(rng)
    for index in range(count):
        yield _row(rng, pool, index, homogeneous)


def write_jsonl(path: Path, count: int, seed: int = 20260301, homogeneous: bool = False) -> int:
    """Write `count` rows to `path`, one JSON object a line; returns the file size in bytes."""
    with path.open("w", encoding="utf-8") as fh:
        for row in generate_rows(count, seed, homogeneous):
            fh.write(json.dumps(row, ensure_ascii=False))
            fh.write("\n")
    return path.stat().st_size
