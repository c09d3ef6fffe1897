"""A store for the rubric loop: traces with two claims each and a context, a sample of all of
them, two reviewers who agree (so every claim has gold). Claim 1 of every third trace states
an amount the context does not hold (unsupported); every other claim is supported."""

from __future__ import annotations

import json
from pathlib import Path

from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import Store

FEATURES = ("billing_qa", "hr_policy")


def is_wrong(i: int) -> bool:
    return i % 3 == 0


def trace_rows(count: int) -> list[dict]:
    rows = []
    for i in range(count):
        amount = 40 + i
        said = amount + 7 if is_wrong(i) else amount
        sentences = [
            f"Invoice INV-{1000 + i} was issued by Acme Billing.",
            f"The amount due is ${said}.",
        ]
        response = " ".join(sentences)
        claims, start = [], 0
        for sentence in sentences:
            claims.append({"text": sentence, "start": start, "end": start + len(sentence)})
            start += len(sentence) + 1
        rows.append({
            "trace_id": f"rt-{i:03d}", "feature": FEATURES[i % 2], "risk_category": "financial",
            "request": "What do I owe?",
            "context": [{"source": "kb/billing", "text": f"Invoice INV-{1000 + i} was issued by Acme Billing for ${amount}."}],
            "response": response, "claims": claims,
        })  # fmt: skip
    return rows


def label_rows(count: int) -> list[dict]:
    rows = []
    for i in range(count):
        for claim in (0, 1):
            label = "contradicted" if claim == 1 and is_wrong(i) else "supported"
            for reviewer in ("ann", "ben"):
                rows.append(
                    {
                        "trace_id": f"rt-{i:03d}",
                        "claim": claim,
                        "reviewer": reviewer,
                        "label": label,
                    }
                )
    return rows


def prepare_rubric_store(store: Store, tmp_path: Path, count: int = 60) -> Store:
    traces = tmp_path / "rubric_traces.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in trace_rows(count)))
    import_traces(store, traces)
    draw_sample(store, SampleSpec(name="loop", n=count, by=("feature",), seed=1))
    labels = tmp_path / "rubric_labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in label_rows(count)))
    import_labels(store, labels)
    return store
