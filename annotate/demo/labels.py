"""Simulated reviewers for the bundled demo sample, so Agreement and Calibration show numbers.

Labels follow the sample's ground truth (data/sample_truth.jsonl) with known error rates
and go through the ordinary label import, as external reviewers' labels would. A simulated
lead then adjudicates their disagreements from the truth, all but a few left for the
Adjudicate page, so every stratum has gold and the Rates page has its numbers.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from annotate.ingest.importer import ImportReport
from annotate.ingest.labels import import_labels
from annotate.labelling.adjudication import adjudicate, disagreements
from annotate.store import Store
from annotate.store import evidence as sql
from annotate.store.labels import active_rubric
from annotate.store.samples import sample_units
from annotate.store.schema import ERROR_TYPES

START = datetime(2026, 1, 12, 9, 0)
SESSION = 40  # labels per sitting; the next sitting is days later
LEAD = "sim-lead"
LEFT_OPEN = 4  # disagreements the simulated lead leaves for a new lead's Adjudicate page
REASON = "read the context again (simulated lead of the bundled sample)"


@dataclass(frozen=True)
class SimulatedReviewer:
    name: str
    error_rate: float
    seconds: tuple[int, int]  # time per label, uniform between these
    days_between_sittings: int


REVIEWERS = (
    SimulatedReviewer("sim-ana", 0.03, (15, 45), 4),
    SimulatedReviewer("sim-ben", 0.06, (20, 50), 5),
    SimulatedReviewer("sim-cho", 0.25, (3, 7), 3),  # careless and fast: the pages flag her
)


def read_truth(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return {(row["trace_id"], int(row["claim"])): row for row in rows}


def _wrong(truth: str, labels: list[str], rng: random.Random) -> str:
    return rng.choice([label for label in labels if label != truth])


def simulated_rows(
    claims: list[tuple[str, int]],
    truth: Mapping[tuple[str, int], Mapping[str, Any]],
    labels: list[str],
    seed: int = 11,
) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for reviewer in REVIEWERS:
        moment = START + timedelta(hours=rng.randint(0, 8))
        for done, key in enumerate(claims):
            if done and done % SESSION == 0:
                moment += timedelta(days=reviewer.days_between_sittings, hours=rng.randint(-2, 2))
            moment += timedelta(seconds=rng.randint(*reviewer.seconds))
            true = truth[key]
            label = true["label"]
            if rng.random() < reviewer.error_rate:
                label = _wrong(label, labels, rng)
            error_type = None
            if label not in ("supported", "not_a_claim"):
                error_type = true.get("error_type") or rng.choice(ERROR_TYPES)
            yield {
                "trace_id": key[0],
                "claim": key[1],
                "reviewer": reviewer.name,
                "label": label,
                "error_type": error_type,
                "created_at": moment.isoformat(),
            }


def load_demo_labels(store: Store, sample: str, truth_path: Path) -> ImportReport:
    """Label every claim of `sample` that has ground truth, as three simulated reviewers."""
    truth = read_truth(truth_path)
    traces = [unit["trace_id"] for unit in sample_units(store, sample)]
    claims = [
        (c["trace_id"], c["claim_index"])
        for c in sql.claims(store, traces)
        if (c["trace_id"], c["claim_index"]) in truth
    ]
    _, rubric = active_rubric(store)
    rows = simulated_rows(claims, truth, [item["label"] for item in rubric])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "demo_labels.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return import_labels(store, path, name="simulated demo reviewers")


def adjudicate_demo(store: Store, sample: str, truth_path: Path) -> int:
    """The simulated lead's final label, from the truth, on every disagreement of `sample` but
    the first LEFT_OPEN (a claim with disagreement and no adjudication has no gold, and a
    stratum with no gold has no human rate). Returns how many it adjudicated."""
    truth = read_truth(truth_path)
    decided = 0
    for case in disagreements(store, sample, include_resolved=False)[LEFT_OPEN:]:
        true = truth[(case["trace_id"], case["claim_index"])]
        adjudicate(
            store,
            LEAD,
            case["trace_id"],
            case["claim_index"],
            true["label"],
            REASON,
            true.get("error_type"),
        )
        decided += 1
    return decided
