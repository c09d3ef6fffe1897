"""Every rated criterion of a sample in one document, for the report and the auditor bundle:
the reviewers' agreement, each rating judge against the reviewers' mean, and the estimates
per slice. The same functions as the CLI and the pages; nothing computed twice differently."""

from __future__ import annotations

from typing import Any

from annotate.ratings.agreement import reviewer_agreement
from annotate.ratings.calibration import rating_calibration
from annotate.ratings.estimates import rating_estimates
from annotate.store import Store
from annotate.store import ratings as sql


def ratings_document(
    store: Store, sample: str | None, seed: int = 0, repetitions: int = 1000
) -> dict[str, Any]:
    """{"sample", "criteria": {name: {"agreement", "judges": {judge: ...}, "estimates"}}}."""
    judges = sql.rating_judges(store, sample)
    criteria: dict[str, Any] = {}
    for criterion in sql.rated_criteria(store, sample):
        found = {
            judge: rating_calibration(store, judge, criterion, sample, seed, repetitions)
            for judge in judges
        }
        criteria[criterion] = {
            "agreement": reviewer_agreement(store, criterion, sample, seed, repetitions),
            "judges": {judge: doc for judge, doc in found.items() if doc["judged_units"]},
            "estimates": rating_estimates(
                store, criterion, sample, seed=seed, repetitions=repetitions
            ),
        }
    return {"sample": sample, "criteria": criteria}
