"""The sample data's production judge, "prod-judge-v3": wrong in known, slice-dependent ways.

It sees each sentence's truth and flags it as unsupported with a chance set below, so the
calibration the app measures against human labels has a designed answer. No I/O, no clock.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from annotate.demo.content import Sentence

JUDGE = "prod-judge-v3"
# Chance of flagging a claim that truly is unsupported (sensitivity), by its true label.
SENSITIVITY = {"contradicted": 0.90, "not_in_context": 0.88, "partially_supported": 0.55}
SPECIFICITY = 0.95  # chance of passing a supported claim
# The designed blind spots: what calibration against human labels should find.
NUMBER_SENSITIVITY = {"billing_qa": 0.30}  # misses changed amounts and counts in billing answers
FEATURE_SPECIFICITY = {"code_assistant": 0.75}  # over-flags correct code answers
WEAK_MODEL = "northwind-chat-8b"  # on this model's answers it is worse at both
WEAK_MODEL_SENSITIVITY_DROP = 0.15
WEAK_MODEL_SPECIFICITY_DROP = 0.05
NOT_A_CLAIM_FLAG = {"code_assistant": 0.15}  # greetings and advice, default below
NOT_A_CLAIM_FLAG_DEFAULT = 0.03
EMPTY_CONTEXT_FLAG = 0.95
# A verdict's score is the judge's confidence that the claim is supported (low when flagged);
# a response's score is the lowest of its sentences'.

EXPLANATIONS = {
    "supported": ("Stated in {ref}.", "Consistent with {ref}.", "Matches what {ref} says."),
    "contradicted": (
        "Conflicts with {ref}.",
        "The value differs from {ref}.",
        "Contradicted by {ref}.",
    ),
    "not_in_context": (
        "No context item mentions this.",
        "Not stated in the provided context.",
        "The context does not support this detail.",
    ),
    "partially_supported": (
        "Only part of this is in {ref}.",
        "The first part matches {ref}; the rest is not in the context.",
    ),
    "no_claim": (
        "Not a factual claim; nothing to verify.",
        "Greeting or advice, nothing to check.",
    ),
    "false_alarm": ("Could not find this in the context.", "The wording goes beyond {ref}."),
    "empty": ("No context was provided, so this cannot be verified.",),
}


def judge_trace(
    rng: random.Random,
    feature: str,
    model: str,
    sentences: Sequence[Sentence],
    refs: Mapping[int, str],
    claims_given: bool,
    empty: bool,
) -> tuple[list[dict], list[str]]:
    """The judge's verdicts and its label for every sentence.

    Verdicts are one per claim when the trace gives claims, and always one for the response.
    """
    calls = [_call(rng, feature, model, sentence, empty) for sentence in sentences]
    verdicts = []
    if claims_given:
        for index, (sentence, (label, score)) in enumerate(zip(sentences, calls, strict=True)):
            explanation = _explain(rng, sentence, label, refs, empty)
            verdicts.append(_claim_verdict(index, label, score, explanation))
    verdicts.append(_response_verdict(calls))
    return verdicts, [label for label, _ in calls]


def flag_chance(feature: str, model: str, sentence: Sentence, empty: bool) -> float:
    """The chance the judge calls this sentence unsupported."""
    if sentence.label == "not_a_claim":
        return NOT_A_CLAIM_FLAG.get(feature, NOT_A_CLAIM_FLAG_DEFAULT)
    if empty:
        return EMPTY_CONTEXT_FLAG
    weak = model == WEAK_MODEL
    if sentence.label == "supported":
        specificity = FEATURE_SPECIFICITY.get(feature, SPECIFICITY)
        return 1 - specificity + (WEAK_MODEL_SPECIFICITY_DROP if weak else 0)
    sensitivity = SENSITIVITY[sentence.label]
    if sentence.error_type == "number":
        sensitivity = NUMBER_SENSITIVITY.get(feature, sensitivity)
    return sensitivity - (WEAK_MODEL_SENSITIVITY_DROP if weak else 0)


def _call(
    rng: random.Random, feature: str, model: str, sentence: Sentence, empty: bool
) -> tuple[str, float]:
    flagged = rng.random() < flag_chance(feature, model, sentence, empty)
    if flagged:
        return "unsupported", round(rng.uniform(0.03, 0.45), 2)
    return "supported", round(rng.uniform(0.55, 0.99), 2)


def _explain(
    rng: random.Random, sentence: Sentence, label: str, refs: Mapping[int, str], empty: bool
) -> str:
    if label == "supported":
        kind = "no_claim" if sentence.label == "not_a_claim" else "supported"
    elif empty:
        kind = "empty"
    elif sentence.label in ("supported", "not_a_claim"):
        kind = "false_alarm"
    else:
        kind = sentence.label
    ref = refs.get(sentence.doc) if sentence.doc is not None else None
    ref = ref or next(iter(refs.values()), "the context")
    return rng.choice(EXPLANATIONS[kind]).format(ref=ref)


def _claim_verdict(index: int, label: str, score: float, explanation: str) -> dict:
    return {
        "judge": JUDGE,
        "level": "claim",
        "claim": index,
        "label": label,
        "score": score,
        "explanation": explanation,
    }


def _response_verdict(calls: Sequence[tuple[str, float]]) -> dict:
    flagged = sum(label == "unsupported" for label, _ in calls)
    total = len(calls)
    if flagged:
        verb = "is" if flagged == 1 else "are"
        explanation = f"{flagged} of {total} statements {verb} not supported by the context."
    else:
        explanation = f"All {total} statements are supported by the context."
    return {
        "judge": JUDGE,
        "level": "response",
        "label": "unsupported" if flagged else "supported",
        "score": min(score for _, score in calls),
        "explanation": explanation,
    }
