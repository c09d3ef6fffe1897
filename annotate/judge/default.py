"""Which judge a page or command uses when none is named: the current rubric's judge where it
has verdicts on the sample, else the judge with the most verdicts there; always with the
reason, so the choice is named and never silent (issue 39: an imported production judge was
chosen over the version the lead had just run)."""

from __future__ import annotations

from dataclasses import dataclass

from annotate.store import Store
from annotate.store import rubrics as rubric_sql
from annotate.store.judge_choice import verdict_counts


@dataclass(frozen=True)
class JudgeChoice:
    judge: str | None
    reason: str
    judges: list[str]  # every judge with verdicts, the chosen one first


def current_rubric_judges(store: Store) -> tuple[int, str | None]:
    """The current rubric version and its default model (None when it names none)."""
    version = rubric_sql.current_version(store)
    row = rubric_sql.rubric_row(store, version) or {}
    spec = row.get("spec") or {}
    return version, spec.get("model") if isinstance(spec, dict) else None


def choose_judge(store: Store, sample: str | None = None) -> JudgeChoice:
    counts = verdict_counts(store, sample)
    if not counts:
        return JudgeChoice(None, "no judge has verdicts", [])
    where = f"on sample {sample!r}" if sample else "in the store"
    version, model = current_rubric_judges(store)
    own = [j for j, on, _ in counts if on and j.startswith(f"rubric-v{version}:")]
    if own:  # the version's default model first, else its judge with most verdicts
        judge = f"rubric-v{version}:{model}" if f"rubric-v{version}:{model}" in own else own[0]
        reason = f"the current rubric's judge (rubric v{version})"
    elif sample and not counts[0][1]:
        judge = counts[0][0]
        reason = f"no judge has verdicts {where}: the judge with the most verdicts in the store"
    else:
        judge = counts[0][0]
        reason = (
            f"the judge with the most verdicts {where} "
            f"(the current rubric v{version} has none there)"
        )
    ordered = [judge, *(j for j, _, _ in counts if j != judge)]
    return JudgeChoice(judge, reason, ordered)
