"""A small store for the rates tests: traces with one claim each and a judge, a stratified
sample, and reviewers' labels whose unsupported share per feature is chosen by the test."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from pathlib import Path

from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import Store, open_store

JUDGE = "prod-judge"
FEATURES = {"billing_qa": 300, "hr_policy": 100}  # traces per feature in the frame


def write_traces(
    path: Path, judge_rates: Mapping[str, float], seed: int = 1, attributes: bool = False
) -> Path:
    """`attributes`: each trace also says which retriever served it (a slice across features)."""
    rng = random.Random(seed)
    lines = []
    for feature, count in FEATURES.items():
        for i in range(count):
            text = f"The {feature} answer number {i} is correct."
            flagged = rng.random() < judge_rates[feature]
            lines.append(
                {
                    "trace_id": f"{feature}-{i:04d}",
                    "timestamp": f"2026-03-{1 + i % 28:02d}T10:00:00Z",
                    "feature": feature,
                    "risk_category": "financial" if feature == "billing_qa" else "privacy",
                    "model": "m-1" if i % 2 else "m-2",
                    "request": "q",
                    "response": text,
                    "context": ["ctx"],
                    "claims": [{"text": text, "start": 0, "end": len(text)}],
                    "judge": [
                        {
                            "judge": JUDGE,
                            "level": "claim",
                            "claim": 0,
                            "label": "unsupported" if flagged else "supported",
                            "score": round(rng.random(), 3),
                        }
                    ],
                }
            )
    if attributes:
        for index, line in enumerate(lines):
            line["attributes"] = {"retriever": "bm25" if index % 3 else "dense"}
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def write_labels(
    store: Store, path: Path, gold_rates: Mapping[str, float], judge_agrees: float, seed: int = 2
) -> Path:
    """Two reviewers agree on every sampled claim; the share unsupported per feature is
    gold_rates[feature] (exactly, rounded); the gold follows the judge in `judge_agrees` of them."""
    rng = random.Random(seed)
    rows = store.fetchall(
        "SELECT u.trace_id, t.feature, v.label FROM sample_units u JOIN traces t USING (trace_id) "
        "JOIN judge_verdicts v USING (trace_id) WHERE u.sample = 'main' ORDER BY u.trace_id"
    )
    by_feature: dict[str, list[tuple[str, str]]] = {}
    for trace, feature, label in rows:
        by_feature.setdefault(feature, []).append((trace, label))
    lines = []
    for feature, items in by_feature.items():
        unsupported = round(gold_rates[feature] * len(items))
        order = sorted(items, key=lambda item: (item[1] != "unsupported", rng.random()))
        if judge_agrees < 1:
            rng.shuffle(order)
        for index, (trace, _) in enumerate(order):
            label = "contradicted" if index < unsupported else "supported"
            for reviewer in ("rita", "rolf"):
                lines.append({"trace_id": trace, "claim": 0, "reviewer": reviewer, "label": label})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def make_store(
    tmp: Path,
    gold_rates: Mapping[str, float],
    judge_rates: Mapping[str, float] | None = None,
    sample_n: int = 120,
    judge_agrees: float = 1.0,
    attributes: bool = False,
) -> Path:
    path = tmp / "rates.duckdb"
    store = open_store(path)
    try:
        traces = write_traces(
            tmp / "traces.jsonl", judge_rates or gold_rates, attributes=attributes
        )
        import_traces(store, traces)
        # equal allocation: hr_policy (a quarter of the frame) gets half the sample
        draw_sample(
            store, SampleSpec(name="main", n=sample_n, by=("feature",), allocation="equal", seed=3)
        )
        import_labels(store, write_labels(store, tmp / "labels.jsonl", gold_rates, judge_agrees))
    finally:
        store.close()
    return path
