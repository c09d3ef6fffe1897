"""The rates' frame grows with the sample, not the store: the sample's traces one row each, the
rest of the frame one row per combination of values, standing for its traces.

The references are counts the store gives directly (SQL over the traces and the judge's
verdicts), not numbers of the rates code.
"""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest
from conftest import wait_until_waiting_for_a_read
from rates_data import JUDGE, make_store

from annotate.rates.estimate import ESTIMATORS, rate_rows
from annotate.rates.inputs import load_inputs, stratum_keys, with_response_outcomes
from annotate.rates.trend import scores
from annotate.stats.gold import SUPPORTED, UNSUPPORTED, judge_response_outcome
from annotate.store import open_store
from annotate.store.samples import stratum_key_text


def test_the_frame_holds_each_sampled_trace_and_the_rest_by_combination(tmp_path):
    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}))
    inputs = load_inputs(store, "main", ["feature", "model"])
    frame = inputs.frame
    sampled = set(store.fetchall("SELECT trace_id FROM sample_units WHERE sample = 'main'"))
    assert {(t,) for t in frame["trace_id"].dropna()} == sampled
    assert (frame.loc[frame["trace_id"].notna(), "traces"] == 1).all()
    assert int(frame["traces"].sum()) == store.scalar("SELECT count(*) FROM traces") == 400
    rest = frame[frame["trace_id"].isna()]
    combos = rest[["feature", "model", "day", "jcu", "jcn", "jr"]].astype(str)
    assert not combos.duplicated().any() and len(frame) < 400 - len(sampled) // 2
    # the judge's claim verdicts are summed over a row's traces
    counts = store.fetchone(
        "SELECT count(*) FILTER (WHERE label = 'unsupported'), count(*) FROM judge_verdicts "
        "WHERE judge = ? AND level = 'claim'",
        [JUDGE],
    )
    assert (int(frame["jcu"].sum()), int(frame["jcn"].sum())) == counts
    store.close()


def test_the_judges_rate_and_scores_count_every_frame_trace(tmp_path):
    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}))
    inputs = load_inputs(store, "main", ["feature"])
    rows = rate_rows(inputs, ["feature"], ["claim"], ESTIMATORS, 0.1, 50, 0)
    raw = {tuple(sorted(r["slice"].items())): r for r in rows if r["estimator"] == "judge_raw"}
    for feature in ("billing_qa", "hr_policy"):
        hits, judged = store.fetchone(
            "SELECT count(*) FILTER (WHERE v.label = 'unsupported'), count(*) FROM judge_verdicts "
            "v JOIN traces t USING (trace_id) WHERE t.feature = ? AND v.level = 'claim'",
            [feature],
        )
        row = raw[(("feature", feature),)]
        assert (row["n"], round(row["rate"], 12)) == (judged, round(hits / judged, 12))
    found = scores(store, inputs)
    expected = sorted(r[0] for r in store.fetchall("SELECT score FROM judge_verdicts"))
    assert found["count"] == len(expected) == 400
    store.close()


def test_an_attribute_slice_counts_the_judge_over_its_own_traces(tmp_path):
    """Rows of the rest of the frame group by the attribute too, so its slices are exact."""
    import json

    from rates_data import write_traces

    from annotate.ingest.importer import import_traces
    from annotate.sampling.allocation import SampleSpec
    from annotate.sampling.samples import draw_sample

    path = write_traces(tmp_path / "t.jsonl", {"billing_qa": 0.3, "hr_policy": 0.2})
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for number, row in enumerate(rows):
        row["attributes"] = {"tenant": "north" if number % 3 else "south"}
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = open_store(tmp_path / "a.duckdb")
    import_traces(store, path)
    draw_sample(store, SampleSpec(name="main", n=40, by=("feature",), seed=5))
    inputs = load_inputs(store, "main", ["tenant"])
    found = rate_rows(inputs, ["tenant"], ["claim"], ["judge_raw"], 0.1, 20, 0)
    for tenant in ("north", "south"):
        hits, judged = store.fetchone(
            "SELECT count(*) FILTER (WHERE v.label = 'unsupported'), count(*) FROM judge_verdicts "
            "v JOIN traces t USING (trace_id) WHERE json_extract_string(t.attributes, "
            "'$.tenant') = ?",
            [tenant],
        )
        row = next(r for r in found if r["slice"] == {"tenant": tenant})
        assert (row["n"], round(row["rate"], 12)) == (judged, round(hits / judged, 12))
    assert len(inputs.frame) < len(rows)
    store.close()


def test_a_verdict_reads_the_labels_again_but_not_the_frame(tmp_path, monkeypatch):
    """The frame is kept per frame mark (annotate.store.status.frame_mark): a reviewer's verdict
    does not move it, a change of the judge's label mapping does."""
    from annotate.accounts.users import add_user
    from annotate.judge.labels import set_label
    from annotate.labelling.assignment import assign
    from annotate.labelling.session import next_claim, record_verdict
    from annotate.rates import inputs as rate_inputs

    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}, sample_n=40))
    add_user(store, "ruth", "reviewer", "test passphrase")
    assign(store, "main", ["ruth"], per_trace=1)
    reads = []
    real = rate_inputs.sql.frame_table
    monkeypatch.setattr(rate_inputs.sql, "frame_table", lambda *a: reads.append(1) or real(*a))
    before = load_inputs(store, "main", ["feature"])
    view = next_claim(store, "ruth", "main")
    record_verdict(store, "ruth", view, "contradicted")
    after = load_inputs(store, "main", ["feature"])
    assert len(reads) == 1  # the verdict did not read the frame again...
    # ...the labels were: ruth's verdict disagrees with the two before, so that claim has no
    # gold any more
    assert len(after.claims) == len(before.claims) - 1
    assert after.frame.equals(before.frame)
    after.frame["stratum"] = None  # a caller's frame is its own copy
    assert not load_inputs(store, "main", ["feature"]).frame["stratum"].isna().all()
    assert len(reads) == 1
    set_label(store, JUDGE, "unsupported", "supported", actor="lena")  # the mapping moved
    remapped = load_inputs(store, "main", ["feature"])
    assert len(reads) == 2
    assert int(remapped.frame["jcu"].sum()) == 0  # every judge verdict now maps to supported
    store.close()


def test_a_frame_read_ahead_is_the_one_the_rates_use(tmp_path, monkeypatch):
    """widgets/ahead.py reads Rates' frame on a thread of its own before the view asks: the
    view then reads it no second time, and gets the same frame it would have read itself.
    Catches read_frame_ahead building other query inputs than load_inputs (another key)."""
    from annotate.rates import inputs as rate_inputs

    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}, sample_n=40))
    own = load_inputs(
        store, "main", ["feature"], JUDGE
    ).frame  # a store of its own: no reads kept yet
    rate_inputs._RECENT_FRAMES.clear()
    store.execute("DELETE FROM kept_frames")  # nor kept in the store for the next process
    reads = []
    real = rate_inputs.sql.frame_table
    monkeypatch.setattr(rate_inputs.sql, "frame_table", lambda *a: reads.append(1) or real(*a))
    rate_inputs.read_frame_ahead(store.session(), "main", ("feature",), JUDGE)
    assert len(reads) == 1
    found = load_inputs(store, "main", ["feature"], JUDGE)
    assert len(reads) == 1
    assert found.frame.equals(own)
    store.close()


def test_a_second_asker_waits_for_the_read_under_way():
    """annotate.store.recent: one read per key at a time; a thread asking while another reads
    waits and gets that value. Catches a second read started beside the first (the page and
    the frame read ahead each running the 300,000-trace query)."""
    import threading

    from annotate.kept import Recent

    recent, release, inside, reads, got = Recent(2), threading.Event(), threading.Event(), [], {}

    def slow():
        reads.append(1)
        inside.set()
        assert release.wait(30)
        return "frame"

    first = threading.Thread(target=lambda: got.setdefault("first", recent.get("k", slow)))
    first.start()
    assert inside.wait(30)
    second = threading.Thread(target=lambda: got.setdefault("second", recent.get("k", slow)))
    second.start()
    wait_until_waiting_for_a_read(second)  # waiting on the first read, not reading
    release.set()
    first.join(30)
    second.join(30)
    assert got == {"first": "frame", "second": "frame"}
    assert reads == [1]
    assert recent.get("other", lambda: "x") == "x"  # another key reads at once


def test_a_failed_read_is_not_kept_and_the_next_asker_reads_again():
    from annotate.kept import Recent

    recent, calls = Recent(2), []

    def failing():
        calls.append(1)
        raise RuntimeError("the store moved")

    for _ in range(2):
        with pytest.raises(RuntimeError):
            recent.get("k", failing)
    assert calls == [1, 1]
    assert recent.get("k", lambda: 3) == 3


def test_response_outcomes_and_stratum_keys_follow_the_one_rule_row_by_row():
    """with_response_outcomes and stratum_keys work once per distinct row; every row still gets
    judge_response_outcome of one of its traces and stratum_key_text of its values."""
    rng = np.random.default_rng(7)
    verdicts = np.array([SUPPORTED, UNSUPPORTED, None], dtype=object)
    for dtype in ("str", object):
        n = 300
        traces = rng.integers(1, 4, n)
        unsupported, supported = rng.integers(0, 3, n), rng.integers(0, 3, n)
        frame = pd.DataFrame({
            "jresp": pd.array(rng.choice(verdicts, n), dtype=dtype),
            "jcu": unsupported * traces, "jcn": (unsupported + supported) * traces,
            "nclaims": rng.integers(0, 5, n), "traces": traces,
            "s0": pd.array(rng.choice(np.array(["a", "b", None], dtype=object), n), dtype=dtype),
            "s1": pd.array(rng.choice(np.array(["x", None], dtype=object), n), dtype=dtype),
        })  # fmt: skip
        found = with_response_outcomes(frame)
        keys = stratum_keys(frame, 2)
        for i, row in frame.iterrows():
            said = row["jresp"] if isinstance(row["jresp"], str) else None
            outcome = judge_response_outcome(said, int(unsupported[i]), int(supported[i]),
                                             int(row["nclaims"]))  # fmt: skip
            expected = {UNSUPPORTED: 1.0, SUPPORTED: 0.0}.get(outcome or "", np.nan)
            got = found.loc[i, "jr"]
            assert got == expected or (np.isnan(got) and np.isnan(expected))
            values = tuple(v if isinstance(v, str) else None for v in (row["s0"], row["s1"]))
            assert keys[i] == stratum_key_text(values)


def test_the_collector_is_paused_while_a_lead_view_is_computed_and_back_after(
    tmp_path, monkeypatch
):
    from annotate.agreement.reliability import agreement
    from annotate.rates import view

    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}))
    seen = []
    real = view.load_inputs
    monkeypatch.setattr(view, "load_inputs", lambda *a: seen.append(gc.isenabled()) or real(*a))
    assert gc.isenabled()
    view.rates_view(store, "main", ["feature"], None, "response", 0.1)
    assert seen == [False] and gc.isenabled()
    agreement(store, "main")
    assert gc.isenabled()
    store.close()


def test_the_rates_draws_made_beside_the_frame_are_the_ones_their_rates_use(tmp_path, monkeypatch):
    """load_inputs with `draws` starts the bootstrap's draws of that level while the frame is
    read, for the groups the rates resample: the rates then draw nothing more (a draw under
    way is waited for), and they are the rates of inputs read without."""
    from annotate.rates import inputs as rate_inputs
    from annotate.rates.estimate import Design
    from annotate.stats import resamples

    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}))
    plain = rate_rows(load_inputs(store, "main", ["feature"]), ["feature"], ["response"])
    monkeypatch.setattr(
        resamples, "_RECENT_DRAWS", resamples._draws_kept(resamples.RECENT_DRAWS_BYTES)
    )
    asked, made = [], []
    real_ahead, real_draws = rate_inputs.draw_ahead, resamples._draws
    monkeypatch.setattr(rate_inputs, "draw_ahead", lambda *a: asked.append(a) or real_ahead(*a))
    monkeypatch.setattr(resamples, "_draws", lambda *a: made.append(a) or real_draws(*a))
    inputs = load_inputs(store, "main", ["feature"], draws=("response", 1000, 0))
    assert rate_rows(inputs, ["feature"], ["response"]) == plain
    units = Design(inputs, "response", 1000, 0).units
    assert asked == [(list(units["trace_id"]), 1000, 0, list(units["stratum"]))]
    assert len(made) == 1
    store.close()


def test_the_rates_come_out_the_same_when_the_thread_pools_take_no_more_work(tmp_path, monkeypatch):
    """At interpreter shutdown concurrent.futures stops every pool while the app's daemon
    threads (the lead pages computed ahead) still run: the frame read beside and the draws
    made ahead then run in the caller, and the rates are those of a normal run. Catches
    "cannot schedule new futures after shutdown" raised from the view (a red CI log)."""
    from concurrent.futures import ThreadPoolExecutor

    from annotate.rates import inputs as rate_inputs
    from annotate.stats import resamples

    store = open_store(make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3}))
    plain = rate_rows(load_inputs(store, "main", ["feature"]), ["feature"], ["response"])
    rate_inputs._RECENT_FRAMES.clear()
    monkeypatch.setattr(
        resamples, "_RECENT_DRAWS", resamples._draws_kept(resamples.RECENT_DRAWS_BYTES)
    )
    for module, name in [(rate_inputs, "_BESIDE"), (resamples, "_AHEAD")]:
        stopped = ThreadPoolExecutor(1)
        stopped.shutdown()
        with pytest.raises(RuntimeError):
            stopped.submit(int)  # the refusal this test is about
        monkeypatch.setattr(module, name, stopped)
    inputs = load_inputs(store, "main", ["feature"], draws=("response", 1000, 0))
    assert rate_rows(inputs, ["feature"], ["response"]) == plain
    store.close()


def test_work_refused_by_a_stopped_pool_runs_in_the_caller_with_its_outcome():
    from concurrent.futures import ThreadPoolExecutor

    from annotate.kept import beside

    pool = ThreadPoolExecutor(1)
    pool.shutdown()
    assert beside(pool, pow, 2, 10).result() == 1024
    with pytest.raises(ZeroDivisionError):
        beside(pool, divmod, 1, 0).result()


# A thread still running when the interpreter shuts down (the lead pages' worker, a daemon, or
# this non-daemon one): threading runs concurrent.futures' exit first, which stops every pool,
# then marks the main thread stopped, then joins the threads left. This one waits for that mark
# and computes the rates: they come out, with no "cannot schedule new futures".
AT_SHUTDOWN = """
import sys, threading, time
from annotate.rates.estimate import rate_rows
from annotate.rates.inputs import load_inputs
from annotate.store import open_store

store = open_store(sys.argv[1])

def late():
    while threading.main_thread().is_alive():
        time.sleep(0.01)
    try:
        inputs = load_inputs(store, "main", ["feature"], draws=("response", 200, 0))
        rows = rate_rows(inputs, ["feature"], ["response"])
        print("rates", len(rows), flush=True)
    except Exception as exc:
        print("failed", type(exc).__name__, exc, flush=True)

threading.Thread(target=late).start()
"""


def test_a_thread_computing_the_rates_as_the_interpreter_shuts_down_gets_them(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    path = make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.3})
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", AT_SHUTDOWN, str(path)],
        capture_output=True, text=True, timeout=120, cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("rates "), (done.stdout, done.stderr[-2000:])
