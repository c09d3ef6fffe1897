"""Active samples in a real store: the draw follows the judge's scores by the documented hash
rule, its rates are the 1/pi estimators of the stored probabilities (checked by hand), a top-up
learns from the gold so far, the CLI and plan-labels speak of it, and its auditor bundle
verifies and re-derives every rate from the stored probabilities."""

from __future__ import annotations

import hashlib
import io
import json
import random
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from rates_data import JUDGE, write_traces
from test_rates_exports import forge

from annotate.ingest.importer import import_traces
from annotate.ingest.labels import import_labels
from annotate.rates.active import draw_active_sample, expected_errors, top_up_active
from annotate.rates.bundle import build_bundle, verify_bundle
from annotate.rates.estimate import rate_rows
from annotate.rates.gate import run_gate
from annotate.rates.inputs import load_inputs
from annotate.rates.trend import trend
from annotate.sampling.allocation import SampleError, SampleSpec
from annotate.sampling.samples import top_up
from annotate.store import Store, open_store

RATES = {"billing_qa": 0.2, "hr_policy": 0.3}
SPEC = SampleSpec(name="act", n=60, by=("feature",), seed=4)


def new_store(folder: Path) -> Store:
    store = open_store(folder / "active.duckdb")
    import_traces(store, write_traces(folder / "traces.jsonl", RATES))
    return store


def label(store: Store, folder: Path, trace_ids: list[str], seed: int = 1) -> None:
    """Two reviewers agree; the gold is the judge's verdict, wrong more often where its score
    is near 1/2 (errors where the judge is unsure)."""
    rng = random.Random(seed)
    rows = store.fetchall(
        "SELECT trace_id, label, score FROM judge_verdicts WHERE trace_id IN (SELECT unnest(?))",
        [trace_ids],
    )
    lines = []
    for trace, verdict, score in rows:
        wrong = rng.random() < 0.05 + 1.2 * score * (1 - score)
        unsupported = (verdict == "unsupported") != wrong
        for reviewer in ("rita", "rolf"):
            lines.append({"trace_id": trace, "claim": 0, "reviewer": reviewer,
                          "label": "contradicted" if unsupported else "supported"})  # fmt: skip
    path = folder / f"labels-{seed}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_labels(store, path)


def units(store: Store) -> pd.DataFrame:
    rows = store.fetchall(
        "SELECT u.trace_id, u.draw, u.inclusion_probability, u.weight, v.score FROM sample_units u "
        "JOIN judge_verdicts v USING (trace_id) WHERE u.sample = 'act' ORDER BY u.trace_id"
    )
    return pd.DataFrame(rows, columns=["trace_id", "draw", "pi", "weight", "score"])


def uniform(seed: int, draw: int, trace_id: str) -> float:
    """The documented rule, computed here from its text."""
    digest = hashlib.sha256(f"{seed}:{draw}:{trace_id}".encode()).hexdigest()
    return int(digest[:15], 16) / 16**15


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    folder = tmp_path_factory.mktemp("active")
    store = new_store(folder)
    first = draw_active_sample(store, SPEC, [JUDGE])
    label(store, folder, first.plan.trace_ids)
    yield store, folder, first
    store.close()


def test_the_draw_follows_the_scores_by_the_seeded_hash_rule(drawn, tmp_path):
    store, _, first = drawn
    probabilities = first.probabilities
    picked = probabilities[[uniform(4, 1, t) < p for t, p in
                            zip(probabilities["trace_id"], probabilities["pi"], strict=True)]]  # fmt: skip
    assert sorted(picked["trace_id"]) == sorted(first.plan.trace_ids)
    stored = units(store)
    assert stored["pi"].tolist() == pytest.approx(
        probabilities.set_index("trace_id").loc[stored["trace_id"], "pi"].tolist()
    )
    assert stored["weight"].tolist() == pytest.approx((1 / stored["pi"]).tolist())
    unsure = stored["score"] * (1 - stored["score"])
    assert stored["pi"].corr(unsure, method="spearman") > 0.99  # rises with the uncertainty
    assert probabilities["pi"].min() >= first.floor_weight * 60 / 400 - 1e-12
    assert first.basis.startswith("score 400")
    again = draw_active_sample(new_store(tmp_path), SPEC, [JUDGE], plan_only=True)
    assert again.plan.trace_ids == first.plan.trace_ids  # same seed, same sample


def test_the_rates_are_the_1_over_pi_estimators_of_the_stored_probabilities(drawn):
    """Response level by hand from the stored table: Hajek's sum(y / pi) / sum(1 / pi) for the
    human rate; the judge over all 400 traces plus sum((y - f) / pi) / 400 for active
    inference (every drawn trace is labelled, one draw)."""
    store, _, _ = drawn
    stored = units(store)
    gold = store.fetchall(
        "SELECT trace_id, bool_or(label = 'contradicted') FROM label_events GROUP BY trace_id"
    )
    y = stored["trace_id"].map(dict(gold)).astype(float)
    verdicts = dict(store.fetchall("SELECT trace_id, label = 'unsupported' FROM judge_verdicts"))
    f = stored["trace_id"].map(verdicts).astype(float)
    hajek = float((y / stored["pi"]).sum() / (1 / stored["pi"]).sum())
    aipw = (sum(verdicts.values()) + float(((y - f) / stored["pi"]).sum())) / len(verdicts)
    rows = rate_rows(load_inputs(store, "act", (), JUDGE), (), ["response"], resamples=50)
    found = {r["estimator"]: r for r in rows}
    assert found["weighted_human"]["rate"] == pytest.approx(hajek, rel=1e-9)
    assert found["judge_corrected"]["rate"] == pytest.approx(aipw, rel=1e-9)
    assert "Zrnic & Candès 2024" in found["judge_corrected"]["method"]
    assert found["judge_corrected"]["low"] < aipw < found["judge_corrected"]["high"]


def test_the_gate_and_the_trend_read_the_active_weights(drawn):
    store, _, _ = drawn
    gated = run_gate(store, "act", 0.5, estimator="judge_corrected", judge=JUDGE, resamples=50)
    assert gated.rows and all("Zrnic & Candès 2024" in r["method"] for r in gated.rows)
    months = trend(load_inputs(store, "act", ("month",), JUDGE), "month", resamples=50)
    human = [r for r in months["rows"] if r["estimator"] == "weighted_human"]
    assert human and all("own 1/pi" in r["method"] for r in human)


def test_the_uncertainty_comes_from_the_score_else_gold_else_two_judges():
    """Per trace: a score in [0, 1] gives s(1 - s); a trace without one takes its cell's error
    rate on gold; without gold in its cell, the disagreement of two judges."""
    traces = pd.DataFrame({
        "trace_id": ["a", "b", "c", "d", "e", "f"], "key": [("x",)] * 3 + [("y",)] * 3,
        "score0": [0.5, 0.9, None, None, None, None], "nclaims": 0,
        "jresp0": ["unsupported", "supported", "unsupported", "unsupported", "supported", "unsupported"],
        "jresp1": ["unsupported", "supported", "unsupported", "supported", "supported", "unsupported"],
        **{f"{c}{k}": 0 for c in ("jcu", "jcn") for k in (0, 1)},
    })  # fmt: skip
    gold = pd.Series({"a": 1.0, "b": 1.0, "c": 0.0})  # cell x/unsupported: 2 labels, 1 error
    v, basis = expected_errors(traces, gold)
    assert v[:2].tolist() == pytest.approx([0.25, 0.09])
    assert basis == "score 2, gold 1, disagreement 3, none 0"
    assert v[3:].tolist() == pytest.approx([0.25, 1 / 6 / 4, 1 / 6 / 4])  # d: 1 of 6 differ
    pooled = (1 + 1) / (2 + 2)  # the unsupported outcome's errors, (1 + 1) / (2 + 2)
    assert v[2] == pytest.approx((1 + 2 * pooled) / (2 + 2))


def test_a_top_up_learns_from_the_gold_and_never_repeats_a_trace(drawn):
    store, folder, first = drawn
    second = top_up_active(store, "act", 40)
    assert second.draw == 2 and second.basis.startswith("gold 400")
    assert not set(second.plan.trace_ids) & set(first.plan.trace_ids)
    label(store, folder, second.plan.trace_ids, seed=2)
    stored = units(store)
    assert sorted(stored["draw"].unique()) == [1, 2]
    rows = rate_rows(load_inputs(store, "act", ("feature",), JUDGE), ("feature",), ["claim"], resamples=50)  # fmt: skip
    corrected = [r for r in rows if r["estimator"] == "judge_corrected"]
    assert all("2 draws" in r["method"] for r in corrected)
    assert all(r["low"] is not None for r in corrected)
    with pytest.raises(SampleError, match="drawn actively"):
        top_up(store, "act", 10)


def test_the_bundle_verifies_and_rederives_every_rate_from_the_stored_probabilities(
    drawn, tmp_path
):
    store, _, _ = drawn
    build_bundle(store, "act", tmp_path / "b.zip", by=("feature",), judge=JUDGE, resamples=50)
    result = verify_bundle(tmp_path / "b.zip")
    assert result["ok"], result["problems"]
    assert result["rows"] == 2 * 3 * 4  # claim and response, overall and two features

    def halve_one_probability(data: bytes) -> bytes:
        table = pq.read_table(io.BytesIO(data))
        pi = table.column("inclusion_probability").to_pylist()
        pi[0] /= 2
        index = table.schema.get_field_index("inclusion_probability")
        changed = table.set_column(index, "inclusion_probability", pa.array(pi, pa.float64()))
        out = io.BytesIO()
        pq.write_table(changed, out)
        return out.getvalue()

    forge(
        tmp_path / "b.zip", tmp_path / "t.zip", "tables/sample_units.parquet", halve_one_probability
    )
    problems = verify_bundle(tmp_path / "t.zip")["problems"]
    assert any(p.startswith("rates.json: the recomputed rates differ") for p in problems), problems


def test_the_cli_draws_tops_up_and_plans_with_the_active_figures(tmp_path, cli, db_path):
    store = open_store(db_path)
    import_traces(store, write_traces(tmp_path / "traces.jsonl", RATES))
    store.close()
    base = ["sample", "--name", "a", "--by", "feature", "--seed", "9"]
    refused = cli(*base, "--allocation", "active", "--budget", "30")
    assert refused.code != 0 and "--judge NAME" in refused.err
    done = cli(*base, "--allocation", "active", "--judge", JUDGE, "--budget", "30", "--json")
    assert done.code == 0, done.err
    document = json.loads(done.out[: done.out.rindex("}") + 1])
    assert document["allocation"] == "active" and document["budget"] == pytest.approx(30)
    assert "Poisson sampling" in document["hash_rule"]
    more = cli("sample", "--name", "a", "--top-up", "20")
    assert more.code == 0 and "active draw 2" in more.err, more.err
    planned = cli("plan-labels", "--sample", "a", "--width", "0.1")
    assert planned.code == 0 and "uniform PPI" in planned.out and "active" in planned.out
    grown = cli("plan-labels", "--sample", "a", "--width", "0.1", "--top-up", "--json")
    assert grown.code == 0, grown.err
    assert json.loads(grown.out)["top_up"]["added"] > 0  # drawn actively: its draw 3
    check = open_store(db_path)
    try:
        assert check.scalar("SELECT max(draw) FROM active_draws WHERE sample = 'a'") == 3
    finally:
        check.close()


def test_the_sample_page_plans_draws_and_tops_up_an_active_sample(tmp_path, monkeypatch):
    from conftest import plain, run_app

    from annotate.accounts.users import User

    store = new_store(tmp_path)
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(tmp_path / "active.duckdb"))
    app = run_app(User("lena", "lead"), "pages/sample.py")
    app.text_input(key="sample_name").input("page-active")
    app.number_input(key="sample_n").set_value(40)
    app.selectbox(key="sample_allocation").select("active")
    app.selectbox(key="sample_judge").select(JUDGE)
    app.button[0].click().run()  # the form's "Show the plan"
    assert not app.exception, app.exception
    planned = [plain(h.value) for h in app.subheader if plain(h.value).startswith("Plan:")]
    app.button(key="sample_draw").click().run()
    assert not app.exception, app.exception
    drawn = plain(app.success[0].value)
    assert drawn.startswith("Drew ") and planned == [f"Plan: {drawn.split()[1]} of 400 traces"]
    app.button(key="sample_topup").click().run()  # "Draw more": its sequential top-up
    assert not app.exception, app.exception
    assert plain(app.success[0].value).startswith("Added ")
    check = open_store(tmp_path / "active.duckdb")
    try:
        assert check.fetchall("SELECT draw FROM active_draws ORDER BY draw") == [(1,), (2,)]
    finally:
        check.close()
