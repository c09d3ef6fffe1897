"""Deterministic sample traces and the truth behind them: `python -m annotate.demo`.

Writes data/sample_traces.jsonl (what the app imports) and data/sample_truth.jsonl (the label
of every claim, for tests only; the app never reads it). One random.Random(seed) drives every
choice, so a seed always writes the same bytes. Text lives in content.py and topics_*.py.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from annotate.demo.content import CLOSINGS, GREETINGS, Doc, Sentence, Topic
from annotate.demo.judge import judge_trace
from annotate.demo.slots import (
    ERROR_OF_KIND,
    Slots,
    alter_slot,
    draw_slots,
    fields_of,
    format_slot,
    format_slots,
    is_alterable,
)
from annotate.demo.topics_business import BILLING, HR
from annotate.demo.topics_technical import CODE, MEDICAL
from annotate.demo.truth import truth_rows

DEFAULT_N = 2400
DEFAULT_SEED = 20260301
TRACES_FILE = "sample_traces.jsonl"
TRUTH_FILE = "sample_truth.jsonl"
START = datetime(2026, 1, 5)
SPAN_DAYS = 60
WEEKEND_WEIGHT = 0.45
HOUR_WEIGHTS = (2, 1, 1, 1, 1, 2, 3, 5, 8, 10, 10, 10, 9, 10, 10, 10, 9, 8, 6, 5, 4, 3, 3, 2)  # UTC
PROMPT_SWITCH = datetime(2026, 2, 2)  # the RAG prompt changed from rag-v14 to rag-v15 here
TOPICS = BILLING + HR + MEDICAL + CODE

FEATURES = {"billing_qa": 35, "hr_policy": 25, "medical_info": 15, "code_assistant": 25}
MODELS = ("acme-large-2026-02", "acme-mini-2025-11", "northwind-chat-8b")
MODEL_MIX = {
    "billing_qa": (35, 45, 20),
    "hr_policy": (30, 40, 30),
    "medical_info": (55, 20, 25),
    "code_assistant": (35, 25, 40),
}
LOCALES = {"en-US": 55, "en-GB": 25, "de-DE": 12, "en-IE": 8}
RETRIEVERS = {"hybrid": 55, "bm25": 45}
CHUNKING = ("1000-200", "500-100", "800-0")

# The designed truth: a factual sentence is wrong with chance base x model x retriever.
BASE_RATE = {"billing_qa": 0.08, "hr_policy": 0.05, "medical_info": 0.15, "code_assistant": 0.12}
MODEL_FACTOR = {"acme-large-2026-02": 0.7, "acme-mini-2025-11": 1.6, "northwind-chat-8b": 1.0}
RETRIEVER_FACTOR = {"hybrid": 0.9, "bm25": 1.15}
WRONG_KINDS = ("contradicted", "not_in_context", "partially_supported")
WRONG_KIND_MIX = {
    "billing_qa": (60, 25, 15),
    "hr_policy": (45, 30, 25),
    "medical_info": (45, 35, 20),
    "code_assistant": (40, 45, 15),
}
# Which way a contradiction tends to go, per feature (weights by error type).
CONTRADICTION_MIX = {
    "billing_qa": {"number": 60, "temporal": 15, "entity": 8, "negation": 10, "relation": 7},
    "hr_policy": {"number": 25, "temporal": 30, "entity": 15, "negation": 20, "relation": 10},
    "medical_info": {"number": 35, "temporal": 15, "entity": 20, "negation": 25},
    "code_assistant": {"number": 15, "temporal": 15, "entity": 40, "negation": 30},
}
REQUEST_OPENINGS = ("", "", "", "", "Hi, ", "Hello, ", "Hey, ", "Quick question: ", "Sorry, ")
REQUEST_CLOSINGS = ("", "", "", "", " Thanks!", " Thank you.", " Thanks in advance.", " Cheers")
FACT_COUNTS = ((1, 2, 3, 4), (15, 35, 35, 15))
GREETING_RATE = 0.20
CLOSING_RATE = 0.30
PARAGRAPH_RATE = 0.4  # a closing line sometimes sits in its own paragraph
SAME_TOPIC_DOC_RATE = 0.5
DISTRACTOR_RATE = 0.35
SOURCED_ITEM_RATE = 0.7
EMPTY_CONTEXT_RATE = 0.02
CLAIMS_GIVEN_RATE = 0.60
JUDGED_RATE = 0.90


def generate(n: int = DEFAULT_N, seed: int = DEFAULT_SEED) -> tuple[list[dict], list[dict]]:
    """The sample traces and, one row per claim, the truth they were written from.

    A claim is a sentence of the response, whether or not the trace lists its claims; offsets
    are Python string indices. With an empty context every factual claim is not_in_context
    with no error type. judge_label is the claim-level verdict shown in the trace (None when
    the trace has no claim-level verdicts); judge_correct is None for not_a_claim.
    """
    rng = random.Random(seed)
    traces: list[dict] = []
    truth: list[dict] = []
    for number, moment in enumerate(_timestamps(rng, n), start=1):
        trace, rows = _make_trace(rng, f"tr-{number:06d}", moment)
        traces.append(trace)
        truth.extend(rows)
    return traces, truth


def write_sample(
    directory: Path, n: int = DEFAULT_N, seed: int = DEFAULT_SEED
) -> tuple[Path, Path]:
    """Write both files (each replaced whole, never half-written); return their paths."""
    traces, truth = generate(n, seed)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = (directory / TRACES_FILE, directory / TRUTH_FILE)
    for path, rows in zip(paths, (traces, truth), strict=True):
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(to_jsonl(rows), encoding="utf-8", newline="\n")
        os.replace(temporary, path)
    return paths


def to_jsonl(rows: Sequence[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n" for row in rows)


def _timestamps(rng: random.Random, n: int) -> list[datetime]:
    """n moments over SPAN_DAYS, busier on weekdays and in working hours, in order."""
    days = [START + timedelta(days=day) for day in range(SPAN_DAYS)]
    day_weights = [WEEKEND_WEIGHT if day.weekday() >= 5 else 1.0 for day in days]
    moments = [
        day + timedelta(hours=hour, seconds=rng.randrange(3600))
        for day, hour in zip(
            rng.choices(days, weights=day_weights, k=n),
            rng.choices(range(24), weights=HOUR_WEIGHTS, k=n),
            strict=True,
        )
    ]
    return sorted(moments)


def _weighted(rng: random.Random, options: Sequence[Any], weights: Sequence[float]) -> Any:
    return rng.choices(options, weights=weights)[0]


@dataclass(frozen=True)
class _Setting:
    """Who asked what of which model, and the slot values its documents and answer share."""

    feature: str
    topic: Topic
    model: str
    attributes: dict[str, str]
    day: date
    slots: Slots
    values: dict[str, str]
    request: str
    lead: int  # the fact that answers the request


def _make_trace(rng: random.Random, trace_id: str, moment: datetime) -> tuple[dict, list[dict]]:
    setting = _draw_setting(rng, moment)
    sentences = _plan_response(rng, setting)
    response, spans = _layout(rng, sentences)
    empty = rng.random() < EMPTY_CONTEXT_RATE
    context, refs = ([], {}) if empty else _build_context(rng, setting, sentences)
    if empty:
        sentences = [_unverifiable(sentence) for sentence in sentences]
    claims_given = rng.random() < CLAIMS_GIVEN_RATE
    judged = rng.random() < JUDGED_RATE
    verdicts, judge_labels = judge_trace(
        rng, setting.feature, setting.model, sentences, refs, claims_given, empty
    )
    row: dict[str, Any] = {
        "trace_id": trace_id,
        "timestamp": moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "feature": setting.feature,
        "risk_category": setting.topic.risk,
        "model": setting.model,
        "request": setting.request,
        "context": context,
        "response": response,
    }
    if claims_given:
        row["claims"] = [_claim(s.text, span) for s, span in zip(sentences, spans, strict=True)]
    if judged:
        row["judge"] = verdicts
    row["attributes"] = setting.attributes
    shown = judge_labels if judged and claims_given else [None] * len(sentences)
    return row, truth_rows(trace_id, sentences, spans, shown)


def _draw_setting(rng: random.Random, moment: datetime) -> _Setting:
    feature = _weighted(rng, list(FEATURES), list(FEATURES.values()))
    topics = [topic for topic in TOPICS if topic.feature == feature]
    topic = _weighted(rng, topics, [topic.weight for topic in topics])
    model = _weighted(rng, MODELS, MODEL_MIX[feature])
    attributes = _attributes(rng, moment)
    slots = draw_slots(rng, topic.slots, moment.date())
    values = format_slots(slots, attributes["locale"])
    request, lead = rng.choice(topic.requests)
    return _Setting(
        feature, topic, model, attributes, moment.date(), slots, values,
        _phrase_request(rng, request.format_map(values)), lead,
    )  # fmt: skip


def _phrase_request(rng: random.Random, request: str) -> str:
    """The same question as different users type it: with or without a hello and a thanks."""
    opening = rng.choice(REQUEST_OPENINGS)
    if opening and not re.match(r"I\b", request):
        request = request[0].lower() + request[1:]
    return opening + request + rng.choice(REQUEST_CLOSINGS)


def _attributes(rng: random.Random, moment: datetime) -> dict[str, str]:
    return {
        "chunking": rng.choice(CHUNKING),
        "retriever": _weighted(rng, list(RETRIEVERS), list(RETRIEVERS.values())),
        "locale": _weighted(rng, list(LOCALES), list(LOCALES.values())),
        "prompt_version": "rag-v14" if moment < PROMPT_SWITCH else "rag-v15",
    }


def _wrong_chance(setting: _Setting) -> float:
    retriever = setting.attributes["retriever"]
    return BASE_RATE[setting.feature] * MODEL_FACTOR[setting.model] * RETRIEVER_FACTOR[retriever]


class _Draft:
    """The facts, partial claims and extras of one topic still unused in this response."""

    def __init__(self, rng: random.Random, setting: _Setting):
        self.rng = rng
        self.setting = setting
        self.topic = setting.topic
        self.facts = list(range(len(self.topic.facts)))
        self.partials = list(self.topic.partials)
        self.extras = list(self.topic.extras)

    def _take_fact(self, index: int) -> tuple[int, float]:
        """Use a fact up; the one that answers the request goes first."""
        self.facts.remove(index)
        return self.topic.facts[index].doc, -1.0 if index == self.setting.lead else float(index)

    def supported(self) -> Sentence:
        lead = self.setting.lead
        index = lead if lead in self.facts else self.rng.choice(self.facts)
        text = self.topic.facts[index].text.format_map(self.setting.values)
        return Sentence(text, "supported", None, *self._take_fact(index))

    def contradicted(self) -> Sentence:
        options = [(i, option) for i in self.facts for option in self._contradictions(i)]
        if not options:
            return self.supported()
        mix = CONTRADICTION_MIX[self.topic.feature]
        per_type = Counter(option[0] for _, option in options)
        weights = [mix.get(option[0], 5) / per_type[option[0]] for _, option in options]
        index, (error_type, name, template) = _weighted(self.rng, options, weights)
        values = dict(self.setting.values)
        if name is not None:
            changed = alter_slot(self.rng, self.setting.slots[name], self.setting.slots)
            values[name] = format_slot(changed, self.setting.attributes["locale"])
        text = template.format_map(values)
        return Sentence(text, "contradicted", error_type, *self._take_fact(index))

    def _contradictions(self, index: int) -> list[tuple[str, str | None, str]]:
        """Each way to contradict a fact: (error type, slot to change or None, template)."""
        fact = self.topic.facts[index]
        slots = self.setting.slots
        names = [name for name in fields_of(fact.text) if is_alterable(slots[name])]
        options = [(ERROR_OF_KIND[slots[name].kind], name, fact.text) for name in names]
        return options + [(error_type, None, text) for error_type, text in fact.wrong]

    def partially_supported(self) -> Sentence:
        if not self.partials:
            return self.contradicted()
        extra = self.rng.choice(self.partials)
        self.partials.remove(extra)
        first = [i for i, fact in enumerate(self.topic.facts) if fact.doc == extra.doc]
        text = extra.text.format_map(self.setting.values)
        return Sentence(text, "partially_supported", extra.error_type, extra.doc, first[0] + 0.5)

    def not_in_context(self) -> Sentence:
        if not self.extras:
            return self.contradicted()
        extra = self.rng.choice(self.extras)
        self.extras.remove(extra)
        text = extra.text.format_map(self.setting.values)
        order = self.rng.uniform(0, len(self.topic.facts))
        return Sentence(text, "not_in_context", extra.error_type, None, order)


def _plan_response(rng: random.Random, setting: _Setting) -> list[Sentence]:
    """2-6 sentences: factual ones, each wrong with the setting's chance, maybe framed by
    a greeting and a closing line."""
    draft = _Draft(rng, setting)
    chance = _wrong_chance(setting)
    body = []
    for _ in range(_weighted(rng, *FACT_COUNTS)):
        kind = "supported"
        if rng.random() < chance:
            kind = _weighted(rng, WRONG_KINDS, WRONG_KIND_MIX[setting.feature])
        body.append(getattr(draft, kind)())
    body.sort(key=lambda sentence: sentence.order)
    phrases = GREETINGS[setting.feature]
    head = [_not_a_claim(rng, phrases)] if rng.random() < GREETING_RATE else []
    closing = rng.random() < CLOSING_RATE or len(head) + len(body) < 2
    tail = [_not_a_claim(rng, CLOSINGS[setting.feature])] if closing else []
    return head + body + tail


def _not_a_claim(rng: random.Random, phrases: Sequence[str]) -> Sentence:
    return Sentence(rng.choice(phrases), "not_a_claim")


def _unverifiable(sentence: Sentence) -> Sentence:
    """With no context at all, nothing the response states can be supported."""
    if sentence.label == "not_a_claim":
        return sentence
    return Sentence(sentence.text, "not_in_context", None, None, sentence.order)


def _layout(rng: random.Random, sentences: list[Sentence]) -> tuple[str, list[tuple[int, int]]]:
    """Join sentences into the response text; return it with each sentence's [start, end)."""
    text, spans = "", []
    for index, sentence in enumerate(sentences):
        if index:
            last = index == len(sentences) - 1 and sentence.label == "not_a_claim"
            text += "\n\n" if last and rng.random() < PARAGRAPH_RATE else " "
        spans.append((len(text), len(text) + len(sentence.text)))
        text += sentence.text
    return text, spans


def _build_context(
    rng: random.Random, setting: _Setting, sentences: list[Sentence]
) -> tuple[list[Any], dict[int, str]]:
    """The retrieved items: the docs the sentences rest on, maybe more, in retrieval order.

    Also returns how a judge would cite each topic doc: its source, or its position.
    """
    topic, values = setting.topic, setting.values
    used = sorted({s.doc for s in sentences if s.doc is not None}) or [0]
    spare = [i for i in range(len(topic.docs)) if i not in used]
    chosen = used + [i for i in spare if rng.random() < SAME_TOPIC_DOC_RATE]
    docs = [
        (i, topic.docs[i].source.format_map(values), topic.docs[i].text.format_map(values))
        for i in chosen
    ]
    strays = [(t, d) for t in TOPICS if t.feature == setting.feature for d in t.docs]
    strays = [(t, d) for t, d in strays if t is not topic]
    while len(docs) < 4 and rng.random() < DISTRACTOR_RATE:
        docs.append(_distractor(rng, setting, strays))
    rng.shuffle(docs)
    context: list[Any] = []
    refs: dict[int, str] = {}
    for position, (index, source, text) in enumerate(docs):
        sourced = rng.random() < SOURCED_ITEM_RATE
        context.append({"source": source, "text": text} if sourced else text)
        if index >= 0:
            refs[index] = source if sourced else f"context item {position + 1}"
    return context, refs


def _distractor(
    rng: random.Random, setting: _Setting, strays: list[tuple[Topic, Doc]]
) -> tuple[int, str, str]:
    """A document of another topic of the same feature, as a retriever drags in; used up."""
    other, doc = strays.pop(rng.randrange(len(strays)))
    values = format_slots(draw_slots(rng, other.slots, setting.day), setting.attributes["locale"])
    return -1, doc.source.format_map(values), doc.text.format_map(values)


def _claim(text: str, span: tuple[int, int]) -> dict:
    return {"text": text, "start": span[0], "end": span[1]}
