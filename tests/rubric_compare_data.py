"""Two rubric versions judged through the real SDK against the fake Messages server on the same
labelled claims (tests/rubric_data.py: 90 traces, claim 1 of every third trace unsupported).

Version A misses the unsupported claim of the first MISSED_BY_A such traces; version B misses
only the first of them and raises one false alarm: B catches SENSITIVITY_GAIN more of the 30
unsupported claims. Every answer carries cache reads and writes, so spend can be priced."""

from __future__ import annotations

import json
import re
from typing import Any

from fake_anthropic import Reply, message
from judge_fakes import blocks, verdict_for
from rubric_data import prepare_rubric_store

from annotate.judge import llm
from annotate.judge.rubrics.runner import run_judge
from annotate.judge.rubrics.versions import edit_rubric

COUNT = 90
UNSUPPORTED = COUNT // 3
MISSED_BY_A = {3 * k for k in range(7)}  # traces rt-000, rt-003, ... rt-018
MISSED_BY_B = {0}
FALSE_ALARM_BY_B = 1  # claim 1 of rt-001 (supported)
SENSITIVITY_GAIN = (len(MISSED_BY_A) - len(MISSED_BY_B)) / UNSUPPORTED
FAST = llm.Retry(attempts=3, timeout=5.0, base_wait=0.01)
USAGE = {"input_tokens": 310, "output_tokens": 70, "cache_read": 900, "cache_write": 40}


def _trace_number(request: dict[str, Any]) -> int:
    return int(re.search(r"INV-(\d+)", blocks(request)["context"])[1]) - 1000


def _version(request: dict[str, Any]) -> str:
    return "B" if "Version B." in json.dumps(request["system"]) else "A"


def answer(request: dict[str, Any]) -> Reply:
    """The correct verdict, except where the version is made to err."""
    verdict = verdict_for(request)
    number, version = _trace_number(request), _version(request)
    missed = MISSED_BY_A if version == "A" else MISSED_BY_B
    unsupported_claim = verdict["label"] == "contradicted"
    if unsupported_claim and number in missed:
        verdict = {**verdict, "label": "supported", "error_type": "none"}
    if version == "B" and number == FALSE_ALARM_BY_B and "amount due" in blocks(request)["claim"]:
        verdict = {**verdict, "label": "contradicted", "error_type": "number"}
    body = message(json.dumps(verdict), USAGE["input_tokens"], USAGE["output_tokens"])
    body["usage"]["cache_read_input_tokens"] = USAGE["cache_read"]
    body["usage"]["cache_creation_input_tokens"] = USAGE["cache_write"]
    return Reply(200, body)


def two_versions(store: Any, tmp_path: Any) -> tuple[int, int]:
    prepare_rubric_store(store, tmp_path, count=COUNT)
    first = edit_rubric(store, 1, {"instructions": "Version A."}, "lena").version
    second = edit_rubric(store, first, {"instructions": "Version B."}, "lena").version
    return first, second


def judge_both(
    store: Any, fake: Any, versions: tuple[int, int], batch: tuple[bool, bool] = (True, True)
) -> list[Any]:
    """Both versions judged over HTTP, each through Message Batches (one request for all its
    claims: quick) or one Messages call a claim."""
    fake.responder = answer
    fake.batch_polls = 0
    client = fake.client()
    return [
        run_judge(
            store,
            "loop",
            version,
            client=client,
            retry=FAST,
            actor="lena",
            batch=batched,
            poll_seconds=0.01,
        )  # fmt: skip
        for version, batched in zip(versions, batch, strict=True)
    ]
