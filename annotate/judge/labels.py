"""The judge label mapping: each label a judge used -> supported, unsupported or abstained.

Saved per judge by a lead (`annotate judge-labels --set`, the Calibration page); common words
have defaults; a label with neither stops calibration with an error that names it and the
command. An abstention is never a class: it is reported as the judge's coverage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.errors import UsageError, counted
from annotate.stats.gold import SUPPORTED, UNSUPPORTED
from annotate.stats.judge import ABSTAINED
from annotate.store import Store
from annotate.store import judge_labels as sql
from annotate.store.labels import active_rubric

OUTCOMES = (SUPPORTED, UNSUPPORTED, ABSTAINED)
# Words whose meaning does not depend on the judge's question. "true", "false", "yes", "no",
# "1" and "0" do (is it supported? is it hallucinated?), so they have no default.
DEFAULTS: dict[str, str] = {
    **dict.fromkeys(
        ("supported", "pass", "passed", "faithful", "correct", "grounded", "consistent",
         "entailed", "entailment", "attributable", "ok"),
        SUPPORTED,
    ),
    **dict.fromkeys(
        ("unsupported", "fail", "failed", "hallucinated", "hallucination", "unfaithful",
         "incorrect", "ungrounded", "inconsistent", "contradicted", "contradiction",
         "not_in_context", "partially_supported", "not_supported", "fabricated"),
        UNSUPPORTED,
    ),
    **dict.fromkeys(
        ("unknown", "abstain", "abstained", "abstention", "error", "unsure", "uncertain",
         "n/a", "na", "none", "skip", "skipped", "refused", "not_a_claim", "cannot_judge"),
        ABSTAINED,
    ),
}  # fmt: skip


class UnmappedJudgeLabelError(UsageError):
    """A judge used labels that map to no outcome: no statistic until a lead maps them."""

    def __init__(self, judge: str, unmapped: Mapping[str, int]) -> None:
        self.judge, self.unmapped = judge, dict(unmapped)
        listed = ", ".join(f"{label!r} ({counted(n, 'verdict')})" for label, n in unmapped.items())
        example = next(iter(unmapped))
        super().__init__(
            f"judge {judge!r} used labels with no mapping to supported / unsupported / "
            f"abstained: {listed}. Map each before calibration: on the Calibration page (lead), "
            f"or with `annotate judge-labels --judge {judge} --set {example}=unsupported`."
        )


def default_outcome(label: str, rubric: Mapping[str, str] | None = None) -> str | None:
    """The active rubric's mapping for its own labels (excluded = abstained), else DEFAULTS."""
    if rubric and label in rubric:
        return ABSTAINED if rubric[label] == "excluded" else rubric[label]
    return DEFAULTS.get(label.strip().lower())


def _rubric(store: Store) -> dict[str, str]:
    _, labels = active_rubric(store)
    return {item["label"]: item["binary"] for item in labels}


def mapping_rows(store: Store, judge: str | None = None) -> list[dict[str, Any]]:
    """Every label each judge used: verdicts, outcome and where the outcome comes from."""
    saved, rubric = sql.saved_mapping(store, judge), _rubric(store)
    rows = []
    for used in sql.used_labels(store, judge):
        entry = saved.get((used["judge"], used["label"]))
        outcome = entry["outcome"] if entry else default_outcome(used["label"], rubric)
        source = (
            f"set by {entry['set_by']} at {entry['set_at']:%Y-%m-%d %H:%M}"
            if entry
            else "default"
            if outcome
            else "unmapped"
        )
        rows.append({**used, "outcome": outcome, "source": source})
    return rows


def label_map(store: Store, judge: str) -> dict[str, str]:
    """label -> outcome for every label `judge` used; raises if any label is unmapped."""
    rows = mapping_rows(store, judge)
    unmapped = {r["label"]: r["verdicts"] for r in rows if r["outcome"] is None}
    if unmapped:
        raise UnmappedJudgeLabelError(judge, unmapped)
    return {r["label"]: r["outcome"] for r in rows}


def set_label(
    store: Store, judge: str, label: str, outcome: str, actor: Actor | str | None = None
) -> None:
    """Save `label` of `judge` as `outcome` (recorded with its actor); the judge used it."""
    if outcome not in OUTCOMES:
        raise UsageError(
            f"a judge label maps to one of {', '.join(OUTCOMES)}, got {outcome!r} for {label!r}"
        )
    used = [r["label"] for r in sql.used_labels(store, judge)]
    if label not in used:
        known = ", ".join(repr(u) for u in used) or "none (no verdicts from this judge)"
        raise UsageError(f"judge {judge!r} never used the label {label!r}; it used: {known}")
    who = as_actor(actor)
    with store.transaction():
        sql.save_mapping(store, judge, label, outcome, who.name)
        record_act(store, who, "setting", f"judge label {judge}", label=label, outcome=outcome)


def parse_assignment(text: str) -> tuple[str, str]:
    """'LABEL=outcome' -> (label, outcome); the label may itself contain '='."""
    label, sep, outcome = text.rpartition("=")
    if not sep or not label:
        raise UsageError(
            f"--set takes LABEL=supported|unsupported|abstained, got {text!r} "
            "(e.g. --set unknown=abstained)"
        )
    return label, outcome.strip().lower()
