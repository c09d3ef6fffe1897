"""Gold labels from reviewers' votes and adjudications, at claim and response level.

Owns the gold rules (docs/statistics.md, "The rules") on an Evidence read by `annotate.labelling.evidence`;
pure: no store, no LLM.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, int]  # (trace_id, claim_index)
SUPPORTED, UNSUPPORTED, EXCLUDED = "supported", "unsupported", "excluded"


@dataclass(frozen=True)
class ClaimGold:
    full: str | None  # the rubric label; None: reviewers disagree and nobody adjudicated
    binary: str | None  # supported | unsupported | excluded; None: unresolved
    error_type: str | None
    source: str  # adjudicated | unanimous | same outcome | unresolved


@dataclass
class Evidence:
    """Everything agreement and calibration need from the store, read once."""

    sample: str | None
    binary: dict[str, str]  # rubric label -> binary outcome
    votes: list[dict[str, Any]]
    adjudications: dict[Key, dict[str, Any]]
    claims: dict[str, list[int]] = field(default_factory=dict)  # trace -> its claim indexes
    texts: dict[Key, str] = field(default_factory=dict)


def votes_by_claim(evidence: Evidence) -> dict[Key, dict[str, dict[str, Any]]]:
    """claim -> reviewer -> that reviewer's current vote."""
    found: dict[Key, dict[str, dict[str, Any]]] = defaultdict(dict)
    for vote in evidence.votes:
        found[(vote["trace_id"], vote["claim_index"])][vote["reviewer"]] = vote
    return found


def _agreed(values: Iterable[str | None]) -> str | None:
    distinct = set(values)
    return next(iter(distinct)) if len(distinct) == 1 else None


def claim_gold(evidence: Evidence) -> dict[Key, ClaimGold]:
    """Every labelled claim's gold: adjudicated; else unanimous; else the shared binary outcome."""
    gold = _adjudicated_gold(evidence)
    voted = _VotedGold(evidence.binary)
    for key, votes in votes_by_claim(evidence).items():
        if key not in gold:
            gold[key] = voted(tuple((v["label"], v["error_type"]) for v in votes.values()))
    return gold


def gold_without_each(evidence: Evidence) -> dict[str, dict[Key, ClaimGold]]:
    """reviewer -> the gold of each claim they labelled, without their own vote: what a
    reviewer is scored against. Equal, on those claims, to `claim_gold` of the evidence less
    that reviewer's votes, in one pass over the votes, not one per reviewer."""
    adjudicated = _adjudicated_gold(evidence)
    voted = _VotedGold(evidence.binary)
    found: dict[str, dict[Key, ClaimGold]] = defaultdict(dict)
    for key, votes in votes_by_claim(evidence).items():
        settled = adjudicated.get(key)
        if settled is not None:
            for reviewer in votes:
                found[reviewer][key] = settled
            continue
        given = [(r, (v["label"], v["error_type"])) for r, v in votes.items()]
        for reviewer, _ in given:
            others = tuple(vote for r, vote in given if r != reviewer)
            if others:
                found[reviewer][key] = voted(others)
    return found


def _adjudicated_gold(evidence: Evidence) -> dict[Key, ClaimGold]:
    return {
        key: ClaimGold(d["label"], evidence.binary.get(d["label"]), d["error_type"], "adjudicated")
        for key, d in evidence.adjudications.items()
    }


class _VotedGold:
    """A claim's gold from its reviewers' (label, error type) votes, no adjudication:
    unanimous, else the shared binary outcome, else unresolved. Kept per distinct votes:
    a sample's claims repeat a handful of patterns (the rule runs once for each)."""

    def __init__(self, binary: Mapping[str, str]) -> None:
        self._outcome = binary.get
        self._seen: dict[tuple[tuple[str, str | None], ...], ClaimGold] = {}

    def __call__(self, votes: tuple[tuple[str, str | None], ...]) -> ClaimGold:
        found = self._seen.get(votes)
        if found is None:
            found = self._seen[votes] = self._rule(votes)
        return found

    def _rule(self, votes: tuple[tuple[str, str | None], ...]) -> ClaimGold:
        labels = {label for label, _ in votes}
        outcomes = set(map(self._outcome, labels))
        errors = {error for _, error in votes if error}
        full = _agreed(labels)
        binary = _agreed(outcomes)
        error_type = _agreed(errors) or ("mixed" if errors else None)
        source = "unanimous" if full else "same outcome" if binary else "unresolved"
        return ClaimGold(full, binary, error_type if binary == UNSUPPORTED else None, source)


def unresolved(gold: Mapping[Key, ClaimGold], scale: str = "binary") -> list[Key]:
    """Claims with no gold on this scale: reviewers disagree and nobody adjudicated."""
    attribute = "binary" if scale == "binary" else "full"
    return sorted(key for key, g in gold.items() if getattr(g, attribute) is None)


def response_outcome(outcomes: Mapping[int, str | None], claims: Iterable[int]) -> str | None:
    """Unsupported if any claim is; supported if every (non-excluded) claim is known and supported."""
    values = [outcomes.get(index) for index in claims]
    if UNSUPPORTED in values:
        return UNSUPPORTED
    kept = [v for v in values if v != EXCLUDED]
    if kept and all(v == SUPPORTED for v in kept):
        return SUPPORTED
    return None


def judge_response_outcome(
    response: str | None, unsupported: int, supported: int, claims: int
) -> str | None:
    """A judge's verdict on a whole response, the one definition every route uses: its own
    response-level verdict when that is supported or unsupported; else, from its claim
    verdicts (mapped), unsupported if it called any claim unsupported, supported if it judged
    every one of the response's `claims` supported, else none (a claim it abstained on or
    never judged leaves the response open)."""
    if response in (SUPPORTED, UNSUPPORTED):
        return response
    if unsupported > 0:
        return UNSUPPORTED
    if claims > 0 and supported >= claims:
        return SUPPORTED
    return None


def response_labels(evidence: Evidence, adjudicated: bool = False) -> dict[str, dict[str, str]]:
    """reviewer -> trace -> the response outcome of that reviewer's claim labels.

    With `adjudicated`, an adjudicated claim counts with its adjudicated label for everyone:
    the reviewers' view after adjudication, from which response gold is taken.
    """
    per_reviewer: dict[str, dict[str, dict[int, str | None]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for vote in evidence.votes:
        per_reviewer[vote["reviewer"]][vote["trace_id"]][vote["claim_index"]] = evidence.binary.get(
            vote["label"]
        )
    settled = _adjudicated(evidence) if adjudicated else {}
    found: dict[str, dict[str, str]] = {}
    for reviewer, traces in per_reviewer.items():
        for trace, given in traces.items():
            claims = evidence.claims.get(trace, list(given))
            outcome = response_outcome({**given, **settled.get(trace, {})}, claims)
            if outcome:
                found.setdefault(reviewer, {})[trace] = outcome
    return found


def _adjudicated(evidence: Evidence) -> dict[str, dict[int, str | None]]:
    """trace -> claim -> the binary outcome of its adjudicated label."""
    found: dict[str, dict[int, str | None]] = defaultdict(dict)
    for (trace, index), decision in evidence.adjudications.items():
        found[trace][index] = evidence.binary.get(decision["label"])
    return found


def response_gold(evidence: Evidence) -> dict[str, str]:
    """trace -> the response outcome every reviewer's labels give, after adjudication.

    The same rule as claim gold, one level up: a response has gold when the reviewers who
    reached a response outcome all reached the same one (docs/statistics.md, "The rules").
    """
    by_trace: dict[str, set[str]] = defaultdict(set)
    for given in response_labels(evidence, adjudicated=True).values():
        for trace, outcome in given.items():
            by_trace[trace].add(outcome)
    return {trace: next(iter(o)) for trace, o in sorted(by_trace.items()) if len(o) == 1}


def reviewer_labels(evidence: Evidence, level: str, scale: str) -> dict[str, dict[Any, Any]]:
    """reviewer -> unit -> label. Binary claims: supported / unsupported / excluded, where a
    claim every reviewer excluded is left out; responses: `response_labels`."""
    if level == "response":
        return response_labels(evidence)
    full = scale == "full"
    by_reviewer: dict[str, dict[Key, str]] = defaultdict(dict)
    for vote in evidence.votes:
        label = vote["label"] if full else evidence.binary.get(vote["label"])
        if label is not None:
            by_reviewer[vote["reviewer"]][(vote["trace_id"], vote["claim_index"])] = label
    if full:
        return dict(by_reviewer)
    given: dict[Key, set[str]] = defaultdict(set)
    for labels in by_reviewer.values():
        for unit, label in labels.items():
            given[unit].add(label)
    dropped = {unit for unit, labels in given.items() if labels == {EXCLUDED}}
    return {
        r: {u: v for u, v in labels.items() if u not in dropped}
        for r, labels in by_reviewer.items()
    }
