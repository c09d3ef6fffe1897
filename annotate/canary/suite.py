"""Make a canary suite from a sample's traces, and export it as JSON Lines for replay.

Each trace's context is copied with its values changed by a rule; the map of original to
fictive values is kept. The question is the trace's own request when its original response
used a changed value, and one generated question per other changed value (at most
`max_questions` a trace, chosen by the seed). The same seed gives the same suite.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.canary.matching import has_value, read_response
from annotate.canary.rules import Change, Rewriter, parse_rule
from annotate.errors import UsageError
from annotate.sampling.samples import known_sample_traces
from annotate.store import Store
from annotate.store import canary as sql
from annotate.store import samples as sample_sql

MAX_QUESTIONS = 3
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NAME = re.compile(r"^[\w.-]{1,64}$")


@dataclass
class Suite:
    name: str
    items: list[dict[str, Any]]
    skipped: int  # sampled traces with no value to change

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "items": len(self.items), "skipped": self.skipped}


def date_shift(seed: int) -> int:
    """The suite's date shift in days: 30 to 400 either way, from the seed."""
    rng = random.Random(f"dates:{seed}")
    return rng.randint(30, 400) * rng.choice((1, -1))


def build_items(
    traces: list[dict[str, Any]],
    name: str,
    rule_text: str,
    swap_names: bool,
    seed: int,
    max_questions: int = MAX_QUESTIONS,
) -> tuple[list[dict[str, Any]], int]:
    """(items, traces skipped) for the given source traces; pure, so determinism is testable."""
    rule, days = parse_rule(rule_text), date_shift(seed)
    found: list[dict[str, Any]] = []
    skipped = 0
    for trace in traces:
        rng = random.Random(f"{seed}:{trace['trace_id']}")
        rewriter = Rewriter(rule, days, rng, swap_names)
        context, changes = [], []
        for position, item in enumerate(trace["context"]):
            text, made = rewriter.rewrite(item["text"], position)
            context.append({"source": item.get("source"), "text": text})
            changes += made
        if not changes:
            skipped += 1
            continue
        found += _trace_items(trace, name, context, changes, rng, max_questions)
    return found, skipped


def _trace_items(
    trace: dict[str, Any],
    name: str,
    context: list[dict[str, Any]],
    changes: list[Change],
    rng: random.Random,
    max_questions: int,
) -> list[dict[str, Any]]:
    value_map = [c.as_json() for c in changes]
    usable = _unique(c for c in value_map if not _ambiguous(c, value_map))
    answer = read_response(trace["response"] or "")
    touched = [c for c in usable if has_value(answer, c, "original")]
    base = {"source_trace": trace["trace_id"], "context": context, "value_map": value_map}
    items = []
    if touched and (trace["request"] or "").strip():
        items.append(
            {**base, "canary_id": f"{name}-{trace['trace_id']}-r", "question_kind": "request"}
            | {"request": trace["request"], "checks": touched}
        )
    others = [c for c in usable if c not in touched]
    chosen = sorted(rng.sample(range(len(others)), min(max_questions, len(others))))
    for number, index in enumerate(chosen, start=1):
        change = others[index]
        question = _question(context, changes, change)
        items.append(
            {**base, "canary_id": f"{name}-{trace['trace_id']}-q{number}"}
            | {"question_kind": "generated", "request": question, "checks": [change]}
        )
    return items


def _unique(changes: Any) -> list[dict[str, Any]]:
    seen, kept = set(), []
    for change in changes:
        key = (change["kind"], change["original"], change["fictive"])
        if key not in seen:
            seen.add(key)
            kept.append(change)
    return kept


def _ambiguous(change: dict[str, Any], value_map: list[dict[str, Any]]) -> bool:
    """A fictive value that is also an original one (or the reverse) cannot tell who answered."""
    fictive = read_response(str(change["fictive"]))
    original = read_response(str(change["original"]))
    return any(
        has_value(fictive, other, "original") or has_value(original, other, "fictive")
        for other in value_map
        if other["kind"] == change["kind"]
    )


def _question(context: list[dict[str, Any]], changes: list[Change], change: dict[str, Any]) -> str:
    """ "According to the context, what goes in the blank: "...___..."?" for one changed value."""
    made = next(
        c
        for c in changes
        if (c.kind, c.original, c.fictive)
        == (change["kind"], change["original"], change["fictive"])
    )
    text = context[made.position]["text"]
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)]
    begin = max(s for s in starts if s <= made.start)
    after = _SENTENCE_END.search(text, made.end)
    end = after.start() if after else len(text)
    cloze = text[begin : made.start] + "___" + text[made.end : end]
    return f'According to the context, what goes in the blank: "{cloze.strip()}"?'


def make_suite(
    store: Store,
    sample: str,
    name: str,
    rule: str = "halve",
    swap_names: bool = False,
    seed: int = 0,
    actor: Actor | str | None = None,
    max_questions: int = MAX_QUESTIONS,
) -> Suite:
    """Make and store a suite from the sample's traces; one transaction, one `canary` act."""
    _check_name(store, name)
    parse_rule(rule)
    trace_ids = known_sample_traces(store, sample)
    traces = sql.source_traces(store, trace_ids)
    items, skipped = build_items(traces, name, rule, swap_names, seed, max_questions)
    if not items:
        raise UsageError(f"sample {sample!r} has no numbers, dates or names to change")
    who = as_actor(actor)
    row = {"name": name, "sample": sample, "rule": rule, "swap_names": swap_names, "seed": seed}
    row |= {"date_shift_days": date_shift(seed), "queue_sample": f"canary:{name}"}
    with store.transaction():
        sql.insert_suite(store, {**row, "created_by": who.name}, items)
        record_act(store, who, "canary", name, action="make", items=len(items), **row)
    return Suite(name, items, skipped)


def _check_name(store: Store, name: str) -> None:
    if not _NAME.fullmatch(name or ""):
        raise UsageError(f"--name {name!r}: a suite name is 1-64 letters, digits, '.', '_' or '-'")
    if sql.suite_row(store, name) is not None:
        raise UsageError(f"a canary suite named {name!r} exists already; choose another --name")
    if sample_sql.sample_row(store, f"canary:{name}") is not None:  # made before the rule
        raise UsageError(
            f"a sample named 'canary:{name}' exists, and the suite's queue would join it; "
            "choose another --name"
        )


def suite(store: Store, name: str) -> dict[str, Any]:
    row = sql.suite_row(store, name)
    if row is None:
        raise UsageError(f"no canary suite named {name!r}; make one with `annotate canary make`")
    return row


def export_rows(store: Store, name: str) -> list[dict[str, Any]]:
    """One row per item, in the generic trace shape less the response, for replay."""
    suite(store, name)
    return [
        {
            "canary_id": item["canary_id"],
            "request": item["request"],
            "context": item["context"],
            "expected": [c["fictive"] for c in item["checks"]],
            "original": [c["original"] for c in item["checks"]],
            "source_trace": item["source_trace"],
            "question_kind": item["question_kind"],
        }
        for item in sql.items(store, name)
    ]


def export_jsonl(store: Store, name: str) -> bytes:
    rows = export_rows(store, name)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def write_suite(store: Store, name: str, path: str | Path) -> int:
    data = export_jsonl(store, name)
    Path(path).write_bytes(data)
    return data.count(b"\n")


def list_suites(store: Store) -> list[dict[str, Any]]:
    return sql.list_suites(store)
