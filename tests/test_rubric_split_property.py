"""Property of the held-out split: each stratum (feature x gold outcome) gives the held-out
part exactly its share (half up), and the same seed gives the same split."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.judge.rubrics.split import HELD_OUT, ensure_split
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import open_store


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    outcomes=st.lists(st.tuples(st.sampled_from("ab"), st.booleans()), min_size=2, max_size=40),
    seed=st.integers(0, 10**6),
)
def test_each_stratum_gives_the_held_out_part_its_share(tmp_path_factory, outcomes, seed):
    folder = tmp_path_factory.mktemp("split")
    traces = folder / "t.jsonl"
    traces.write_text("".join(
        json.dumps({"trace_id": f"t{i}", "feature": f, "response": "A claim.", "context": ["doc"],
                    "claims": [{"text": "A claim.", "start": 0, "end": 8}]}) + "\n"
        for i, (f, _) in enumerate(outcomes)
    ))  # fmt: skip
    labels = folder / "l.jsonl"
    labels.write_text("".join(
        json.dumps({"trace_id": f"t{i}", "claim": 0, "reviewer": "ann", "label": "contradicted" if bad else "supported"}) + "\n"
        for i, (_, bad) in enumerate(outcomes)
    ))  # fmt: skip
    store = open_store(folder / "s.duckdb")
    try:
        import_traces(store, traces)
        draw_sample(store, SampleSpec(name="s", n=len(outcomes), by=("feature",), seed=1))
        import_labels(store, labels)
        parts = ensure_split(store, "s", seed=seed)
        for stratum in set(outcomes):
            members = [f"t{i}" for i, o in enumerate(outcomes) if o == stratum]
            held = sum(parts[(t, 0)] == HELD_OUT for t in members)
            assert held == math.floor(len(members) * 0.3 + 0.5)
        assert ensure_split(store, "s", seed=seed + 1) == parts  # drawn once: the seed is kept
    finally:
        store.close()
