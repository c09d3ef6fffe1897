"""`annotate export-feedback --to phoenix|mlflow`: a sample's verdicts and card sent back to the
tracing server its traces came from.

Only traces pulled from that server (their tool ids stored at the pull) receive anything; the
others are counted and named. Each annotation sent is remembered by its content's digest, so
a second export sends only what changed since the last one: a changed verdict updates the one
sent before (Phoenix upserts by name, span and identifier; MLflow's assessment is updated by
the id it gave), never adds a second.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from annotate.accounts.activity import Actor, as_actor, may_act, record_act
from annotate.connectors.feedback import CARD, Verdict, calibration_card, sample_verdicts
from annotate.connectors.server import Feedback, Server, talking_to
from annotate.sampling.samples import known_sample
from annotate.store import Store
from annotate.store import connectors as sql

UNNAMED = 20  # traces not from the server named in the report; all are counted


@dataclass
class PushPlan:
    destination: str
    to_send: list[Feedback] = field(default_factory=list)
    unchanged: int = 0
    elsewhere: list[str] = field(default_factory=list)  # sample traces not from this server
    card: tuple[str, dict[str, Any]] | None = None
    card_changed: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "destination": self.destination,
            "to_send": len(self.to_send),
            "human": sum(f.kind == "HUMAN" for f in self.to_send),
            "llm": sum(f.kind == "LLM" for f in self.to_send),
            "unchanged": self.unchanged,
            "not_from_this_server": len(self.elsewhere),
            "not_from_this_server_first": self.elsewhere[:UNNAMED],
            "card": self.card_changed,
        }


def plan_push(store: Store, server: Server, sample: str, judge: str | None = None) -> PushPlan:
    """What an export would send (the page's preview): nothing is sent."""
    known_sample(store, sample)
    plan = PushPlan(server.source)
    links = sql.server_links(store, sample, server.source)
    plan.elsewhere = sorted(trace for trace, link in links.items() if link[0] is None)
    sent = sql.sent_digests(store, server.source)
    for verdict in sample_verdicts(store, sample, judge):
        link = links.get(verdict.trace_id)
        if link is None or link[0] is None:
            continue
        feedback = as_feedback(verdict, link)
        if sent.get((feedback.tool_id, feedback.name), ("",))[0] == digest(feedback):
            plan.unchanged += 1
        else:
            plan.to_send.append(feedback)
    plan.card = calibration_card(store, sample, judge)
    if plan.card is not None:
        plan.card_changed = sent.get(("project", card_name(sample)), ("",))[0] != _hash(
            plan.card[0]
        )
    return plan


def push(
    store: Store,
    server: Server,
    sample: str,
    judge: str | None = None,
    actor: Actor | str | None = None,
) -> PushPlan:
    """Send what changed since the last export to this server; the plan of what was sent."""
    who = as_actor(actor)
    may_act(who, "export")
    plan = plan_push(store, server, sample, judge)
    sent = sql.sent_digests(store, server.source)
    for feedback in plan.to_send:
        remote = sent.get((feedback.tool_id, feedback.name), ("", None))[1]
        with talking_to(server.source, f"writing {feedback.name} on trace {feedback.tool_id}"):
            remote = server.send(feedback, remote) or remote
        with store.transaction():  # each one remembered as soon as the server has it
            sql.record_sent(
                store, server.source, feedback.tool_id, feedback.name, digest(feedback), remote
            )
    if plan.card is not None and plan.card_changed:
        with talking_to(server.source, "writing the calibration card"):
            server.set_card(sample, plan.card[0])
        with store.transaction():
            sql.record_sent(
                store, server.source, "project", card_name(sample), _hash(plan.card[0]), None
            )
    with store.transaction():
        record_act(store, who, "export", "feedback", destination=server.source, sample=sample,
                   **{k: v for k, v in plan.as_json().items() if isinstance(v, int)})  # fmt: skip
    return plan


def card_name(sample: str) -> str:
    return f"{CARD}.{sample}"


def as_feedback(verdict: Verdict, link: tuple[Any, ...]) -> Feedback:
    tool_id, _otel_trace, span_id = link
    return Feedback(
        verdict.trace_id, str(tool_id), span_id, verdict.name, verdict.kind, verdict.label,
        verdict.score, verdict.explanation, verdict.source_id, verdict.metadata,
    )  # fmt: skip


def digest(feedback: Feedback) -> str:
    content = [feedback.span_id, feedback.kind, feedback.label, feedback.score,
               feedback.explanation, feedback.source_id, feedback.metadata]  # fmt: skip
    return _hash(json.dumps(content, sort_keys=True, default=str))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
