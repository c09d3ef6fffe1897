"""OpenTelemetry evaluation records of a sample: JSON Lines of OTLP log records, one
`gen_ai.evaluation.result` per verdict (the reviewers' gold and the judge's), appended to the
file, never rewritten. Each names the call span it evaluates (the trace's OTel trace and span
ids, or its gen_ai.response.id), so our own OTLP import attaches it again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor
from annotate.ingest.otlp_evaluations import OWN_HUMAN
from annotate.rates.exports import record_export
from annotate.rates.inputs import RatesInput, load_inputs
from annotate.store import Store
from annotate.store import rates as sql

HUMAN = OWN_HUMAN  # the evaluation name of the reviewers' gold; our OTLP import refuses it


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": str(value)}


def _record(link: tuple[Any, ...], attributes: dict[str, Any], now: int) -> dict[str, Any]:
    otel_trace, span, response_id, _ = link
    attributes = {k: v for k, v in attributes.items() if v is not None}
    if response_id and not span:
        attributes["gen_ai.response.id"] = response_id
    record: dict[str, Any] = {
        "timeUnixNano": str(now),
        "eventName": "gen_ai.evaluation.result",
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
    }
    if otel_trace and span:
        record["traceId"], record["spanId"] = otel_trace, span
    return record


def evaluation_records(
    inputs: RatesInput, links: dict[str, tuple[Any, ...]]
) -> Iterator[dict[str, Any]]:
    """The reviewers' response gold, then the judge's response outcome, per sample trace."""
    now = time.time_ns()
    claims = inputs.claims.groupby("trace_id")["gold"].agg(["sum", "count"])
    for trace, gold in zip(inputs.responses["trace_id"], inputs.responses["gold"], strict=True):
        share = (
            float(claims.loc[trace, "sum"] / claims.loc[trace, "count"])
            if trace in claims.index
            else None
        )
        yield _record(links.get(trace, (None,) * 4), {
            "gen_ai.evaluation.name": HUMAN,
            "gen_ai.evaluation.score.value": share,
            "gen_ai.evaluation.score.label": "unsupported" if gold else "supported",
            "gen_ai.evaluation.explanation": "gold of the reviewers' labels (adjudicated where they disagreed); score: share of claims unsupported",
            "annotate.reviewer": links.get(trace, (None,) * 4)[3],
            "annotate.trace_id": trace,
            "annotate.sample": inputs.sample,
        }, now)  # fmt: skip
    if inputs.judge is None:
        return
    sampled = inputs.frame[inputs.frame["trace_id"].isin(inputs.units["trace_id"])]
    for row in sampled.dropna(subset=["jr"]).to_dict("records"):
        share = float(row["jcu"]) / float(row["jcn"]) if row["jcn"] else None
        trace = str(row["trace_id"])
        yield _record(links.get(trace, (None,) * 4), {
            "gen_ai.evaluation.name": inputs.judge,
            "gen_ai.evaluation.score.value": share,
            "gen_ai.evaluation.score.label": "unsupported" if row["jr"] else "supported",
            "gen_ai.evaluation.explanation": "the judge's verdicts through its label mapping; score: share of claims judged unsupported",
            "annotate.judge": inputs.judge,
            "annotate.rubric_version": ",".join(map(str, inputs.rubric_versions)) or None,
            "annotate.trace_id": trace,
            "annotate.sample": inputs.sample,
        }, now)  # fmt: skip


def otel_lines(store: Store, sample: str, judge: str | None = None) -> list[str]:
    """The sample's evaluation records, one OTLP logs document a line."""
    inputs = load_inputs(store, sample, (), judge)
    links = sql.otel_links(store, sample)
    return [
        json.dumps(_document(record), ensure_ascii=False, sort_keys=True) + "\n"
        for record in evaluation_records(inputs, links)
    ]


def export_otel(
    store: Store,
    sample: str,
    path: str | Path,
    judge: str | None = None,
    actor: Actor | str | None = None,
) -> dict[str, Any]:
    """Append the sample's evaluation records to `path` (one OTLP logs document a line)."""
    lines = otel_lines(store, sample, judge)
    data = "".join(lines).encode()
    with open(path, "ab") as out:  # appended, never rewritten
        out.write(data)
    unlinked = sum(
        1 for line in lines if '"traceId"' not in line and "gen_ai.response.id" not in line
    )
    digest = record_export(
        store, actor, "otel", data, path=str(path), sample=sample, records=len(lines)
    )
    return {"records": len(lines), "unlinked": unlinked, "sha256": digest, "path": str(path)}


def _document(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "annotate"}}]
                },
                "scopeLogs": [{"scope": {"name": "annotate.rates"}, "logRecords": [record]}],
            }
        ]
    }
