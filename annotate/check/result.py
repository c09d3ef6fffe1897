"""One check's outcome: each claim's verdict, the answer's grounded_answer by the gold rule one
level up (unsupported if any claim is; grounded when every claim that is one is supported;
else unknown), the unsupported claims with their quotes, and the line the CLI writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from annotate.claims.sentences import ClaimSpan
from annotate.judge.rubrics.prompt import Verdict
from annotate.stats.gold import SUPPORTED, UNSUPPORTED, response_outcome

UNKNOWN = "unknown"
QUESTION_OUTCOMES = {"yes": SUPPORTED, "no": UNSUPPORTED}  # "unknown" leaves the claim open
# the label an OTLP evaluation record carries for each grounded_answer (mapped by default)
EVALUATION_LABELS = {True: SUPPORTED, False: UNSUPPORTED, UNKNOWN: UNKNOWN}


@dataclass
class ClaimVerdict:
    """A claim of the answer and what the judge said of it (verdict None: no answer)."""

    span: ClaimSpan
    verdict: Verdict | None = None
    outcome: str | None = None  # supported | unsupported | excluded | None (open)
    error: str | None = None


@dataclass
class CheckResult:
    grounded_answer: bool | str  # True, False or "unknown"
    claims: list[ClaimVerdict]
    judge: str
    rubric: dict[str, Any]
    model: str
    latency_ms: float
    held_out: dict[str, Any]
    id: Any = None
    fallback: bool = False  # the verdict is the caller's fallback (timeout or failure)
    errors: list[str] = field(default_factory=list)

    @property
    def unsupported_claims(self) -> list[dict[str, Any]]:
        return [_shown(c) for c in self.claims if c.outcome == UNSUPPORTED]

    @property
    def label(self) -> str:
        return EVALUATION_LABELS[self.grounded_answer]

    def explanation(self) -> str:
        unsupported = self.unsupported_claims
        judged = sum(c.verdict is not None for c in self.claims)
        said = f"{len(unsupported)} of {len(self.claims)} claims unsupported, {judged} judged"
        if self.fallback:
            said += f"; fallback verdict ({'; '.join(self.errors)})"
        quotes = "; ".join(repr(c["quote"]) for c in unsupported[:3])
        return f"{said}: {quotes}" if quotes else said

    def as_json(self) -> dict[str, Any]:
        """The `annotate check` line; its names are a contract."""
        return {
            "id": self.id,
            "grounded_answer": self.grounded_answer,
            "unsupported_claims": self.unsupported_claims,
            "claims": len(self.claims),
            "judged": sum(c.verdict is not None for c in self.claims),
            "judge": self.judge,
            "rubric": self.rubric,
            "model": self.model,
            "latency_ms": round(self.latency_ms, 1),
            "held_out": self.held_out,
            "fallback": self.fallback,
            "errors": self.errors,
        }


def claim_outcome(verdict: Verdict, binary: dict[str, str], granularity: str) -> str | None:
    """A verdict's binary outcome: the rubric's mapping (yes/no for the question form)."""
    if granularity == "question":
        return QUESTION_OUTCOMES.get(verdict.label)
    return binary.get(verdict.label)


def grounded(claims: Sequence[ClaimVerdict], fallback: bool | str) -> bool | str:
    """True, False, unknown when the verdicts leave the answer open (an abstention, only
    excluded claims, no claim at all: the gold rule's "no response outcome"), or `fallback`
    when a failed call left it open."""
    outcome = response_outcome({i: c.outcome for i, c in enumerate(claims)}, range(len(claims)))
    if outcome == SUPPORTED:
        return True
    if outcome == UNSUPPORTED:
        return False
    failed = any(c.error for c in claims)
    return fallback if failed else UNKNOWN


def _shown(claim: ClaimVerdict) -> dict[str, Any]:
    verdict = claim.verdict
    assert verdict is not None  # an unsupported claim has its verdict
    return {
        "quote": claim.span.text,
        "start": claim.span.start,
        "end": claim.span.end,
        "label": verdict.label,
        "error_type": verdict.error_type,
        "reasoning": verdict.reasoning,
        "evidence": verdict.evidence,
    }
