"""Where a sample stands on the lead's path, and the next step, in the app's words.

imported -> sampled -> claims -> assigned -> labelled -> adjudicated -> agreement ->
calibration -> rates. Each step names the app page that does it (a key of app.PAGE_FILES);
the wording names pages and buttons, never command-line flags. No streamlit here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotate.agreement.reliability import pace
from annotate.errors import counted
from annotate.sampling.samples import list_samples
from annotate.store import Store, evidence
from annotate.store import progress as sql


@dataclass(frozen=True)
class Step:
    key: str  # imported | sampled | claims | assigned | labelled | adjudicated | agreement | ...
    title: str
    page: str  # the app page that does this step
    done: bool
    text: str  # where it stands, or what to do first


@dataclass
class LeadPath:
    sample: str | None
    samples: list[str]
    steps: list[Step]
    reviewers: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def next_step(self) -> Step | None:
        """The first step not done yet; None when the whole path is done."""
        return next((step for step in self.steps if not step.done), None)


def lead_path(store: Store, sample: str | None = None) -> LeadPath:
    """The path of `sample` (default: the newest sample)."""
    names = [row["name"] for row in list_samples(store)]
    chosen = sample if sample in names else (names[-1] if names else None)
    if chosen is None:
        return LeadPath(None, names, _before_sampling(sql.store_traces(store)))
    counts = sql.sample_counts(store, chosen)
    reviewers = [_reviewer(row) for row in sql.reviewer_counts(store, chosen)]
    open_items = evidence.open_disagreements(store, chosen)
    steps = _steps(chosen, counts, reviewers, open_items)
    return LeadPath(chosen, names, steps, reviewers, {**counts, "open_disagreements": open_items})


def _before_sampling(traces: int) -> list[Step]:
    imported = Step(
        "imported",
        "Import",
        "import",
        traces > 0,
        f"{counted(traces, 'trace')} in the store"
        if traces
        else "The store is empty: import a trace file on the Import page first.",
    )
    sampled = Step(
        "sampled",
        "Sample",
        "sample",
        False,
        "Draw a sample on the Sample page: reviewers label the claims of sampled traces.",
    )
    later = [
        Step(key, title, page, False, "After a sample is drawn.") for key, title, page in _LATER
    ]
    return [imported, sampled, *later]


_LATER = [
    ("claims", "Claims", "sample"),
    ("assigned", "Assign", "assign"),
    ("labelled", "Label", "assign"),
    ("adjudicated", "Adjudicate", "adjudicate"),
    ("agreement", "Agreement", "agreement"),
    ("calibration", "Calibration", "calibration"),
    ("rates", "Rates", "rates"),
]


def _reviewer(row: dict[str, Any]) -> dict[str, Any]:
    seconds = pace(list(row["times"] or []))
    left = int(row["claims"]) - int(row["done"])
    return {
        "reviewer": row["reviewer"],
        "claims": int(row["claims"]),
        "done": int(row["done"]),
        "seconds_per_claim": seconds,
        "minutes_left": None if seconds is None else round(left * seconds / 60, 1),
    }


def _steps(
    sample: str, c: dict[str, int], reviewers: list[dict[str, Any]], open_items: int
) -> list[Step]:
    to_assign = c["sampled"] - c["without_claims"]
    all_done = bool(reviewers) and all(r["done"] >= r["claims"] for r in reviewers)
    return [
        Step("imported", "Import", "import", True, f"{counted(c['traces'], 'trace')} in the store"),
        Step(
            "sampled",
            "Sample",
            "sample",
            True,
            f"Sample {sample}: {counted(c['sampled'], 'trace')}",
        ),
        Step(
            "claims",
            "Claims",
            "sample",
            c["without_claims"] == 0,
            f"{counted(c['claims'], 'claim')}; every sampled trace has its claims"
            if c["without_claims"] == 0
            else f"{c['without_claims']:,} of {c['sampled']:,} sampled traces have no claims yet: "
            "make them on the Sample page (Make claims).",
        ),
        Step(
            "assigned",
            "Assign",
            "assign",
            c["assigned"] > 0 and c["assigned"] >= to_assign,
            f"{c['assigned']:,} of {c['sampled']:,} traces assigned to {counted(len(reviewers), 'reviewer')}"
            if c["assigned"]
            else "Assign the sample to reviewers on the Assign page.",
        ),
        Step(
            "labelled",
            "Label",
            "assign",
            all_done,
            _labelled_text(reviewers)
            if reviewers
            else "Reviewers label once the sample is assigned.",
        ),
        Step(
            "adjudicated",
            "Adjudicate",
            "adjudicate",
            c["labelled"] > 0 and open_items == 0,
            f"{counted(open_items, 'claim')} where reviewers disagree: a final label each"
            if open_items
            else (
                "No disagreement waits for a final label"
                if c["labelled"]
                else "Disagreements show up once reviewers have labelled."
            ),
        ),
        Step(
            "agreement",
            "Agreement",
            "agreement",
            c["shared"] > 0,
            f"{counted(c['shared'], 'claim')} labelled by two or more reviewers"
            if c["shared"]
            else "Agreement needs claims labelled by two reviewers: assign two reviewers per trace.",
        ),
        Step(
            "calibration",
            "Calibration",
            "calibration",
            c["judge_verdicts"] > 0 and c["labelled"] > 0,
            f"{c['judge_verdicts']:,} judge verdicts on the sample to check against {c['labelled']:,} labelled claims"
            if c["judge_verdicts"]
            else "Calibration needs the judge's verdicts: import traces with them, or run a judge on the Rubric page.",
        ),
        Step(
            "rates",
            "Rates",
            "rates",
            c["labelled"] > 0,
            f"Rates from {counted(c['labelled'], 'labelled claim')}"
            if c["labelled"]
            else "Rates come from labelled claims: label first.",
        ),
    ]


def _labelled_text(reviewers: list[dict[str, Any]]) -> str:
    done = sum(r["done"] for r in reviewers)
    total = sum(r["claims"] for r in reviewers)
    return f"{done:,} of {total:,} assigned claims done by {counted(len(reviewers), 'reviewer')}"
