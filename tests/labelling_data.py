"""A small store ready to label: traces with provided claims and judge verdicts, a sample, accounts."""

from __future__ import annotations

import json
from pathlib import Path

from annotate.accounts.users import add_user
from annotate.ingest.importer import import_traces
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import Store

PASSWORD = "correct horse battery"


def write_labelling_traces(path: Path, count: int = 12) -> Path:
    rows = []
    for i in range(count):
        sentences = [
            f"Invoice INV-{1000 + i} was issued on 2026-02-{1 + i % 27:02d}.",
            f"The amount due is ${40 + i}.00.",
            "Refunds take 5 business days.",
        ]
        response = " ".join(sentences)
        claims, start = [], 0
        for sentence in sentences:
            claims.append({"text": sentence, "start": start, "end": start + len(sentence)})
            start += len(sentence) + 1
        rows.append(
            {
                "trace_id": f"lt-{i:03d}",
                "feature": "billing_qa" if i % 2 else "hr_policy",
                "risk_category": "financial",
                "request": "Why was I charged?",
                "context": [
                    {
                        "source": "kb/billing",
                        "text": f"Invoice INV-{1000 + i} was issued on 2026-02-{1 + i % 27:02d} for ${40 + i}.00.",
                    },
                    "Refunds are processed within 5 business days by Acme Billing.",
                ],
                "response": response,
                "claims": claims,
                "judge": [
                    {
                        "judge": "prod-judge-v3",
                        "level": "claim",
                        "claim": 1,
                        "label": "unsupported",
                        "score": 0.1,
                    },
                    {"judge": "prod-judge-v3", "level": "response", "label": "unsupported"},
                ],
            }
        )
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def prepare(
    store: Store, folder: Path, reviewers: tuple[str, ...] = ("alice", "bob", "carol")
) -> None:
    import_traces(store, write_labelling_traces(folder / "label_traces.jsonl"))
    draw_sample(store, SampleSpec(name="demo", n=12, by=("feature",), seed=1))
    add_user(store, "lena", "lead", PASSWORD)
    for name in reviewers:
        add_user(store, name, "reviewer", PASSWORD)
