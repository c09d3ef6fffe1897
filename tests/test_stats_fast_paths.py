"""The vectorised paths of the statistics (issue #15) against independent implementations.

Each fast path replaced a loop or a scipy.stats call; these tests pin each one to what it
replaced, computed here by scipy.stats or by plain counting, including the rarer branches
(ragged rating rows, labels a pair does not share, p-values capped at 1, strata by first unit).
"""

from __future__ import annotations

import math
import os
from collections import Counter

import numpy as np
import pytest
from conftest import wait_until_waiting_for_a_read
from scipy import stats as scipy_stats

from annotate.report import render
from annotate.stats.alt_test import p_value
from annotate.stats.coefficients import cohen_kappa, conger_measure, pair_measure
from annotate.stats.intervals import (
    Measure,
    _bca_levels,
    _one_blas_thread,
    few_groups_factor,
    interval,
    ratio,
)
from annotate.stats.ratings import codes, counts_table
from annotate.stats.resamples import resample_weights


def plain_counts(table, categories):
    return [
        [Counter(label for label in row if label is not None)[c] for c in categories]
        for row in table
    ]


def test_counts_table_counts_rectangular_and_ragged_rows():
    rectangular = [["a", "b", None], ["b", "b", "b"], [None, None, None], ["c", "a", "a"]]
    ragged = [["a"], ["b", "b", None, "a"], [], ["c", None]]
    for table in (rectangular, ragged):
        found = counts_table(table, ["a", "b", "c"])
        assert found.tolist() == plain_counts(table, ["a", "b", "c"])
        assert found.dtype == float
    assert counts_table([], ["a"]).shape == (0, 1)
    assert counts_table([[None, None]], []).shape == (1, 0)


def test_codes_index_labels_and_pad_ragged_rows_as_not_rated():
    assert codes([["x", None], ["y", "x"]], ["x", "y"]).tolist() == [[0, -1], [1, 0]]
    assert codes([["y"], ["x", "y", "x"]], ["x", "y"]).tolist() == [[1, -1, -1], [0, 1, 0]]
    assert codes([(1, 2), (2, None)], [1, 2]).tolist() == [[0, 1], [1, -1]]
    assert codes([], ["x"]).shape == (0, 0)


def test_a_pair_ignores_labels_on_units_it_does_not_share():
    # "c" is given only where the other rater gave nothing: not a category of the pair.
    a = ["a", "b", "a", "c", None, "b"]
    b = ["a", "b", "b", None, "a", "b"]
    measure = pair_measure(a, b)
    assert measure.units == 4
    assert measure.features.shape == (6, 4)  # two categories: a 2 x 2 joint table per unit
    assert measure.features.sum(axis=0).tolist() == [1, 1, 0, 2]  # aa, ab, ba, bb
    assert measure.features[[3, 4]].sum() == 0
    expected = (3 / 4 - (2 / 4 * 1 / 4 + 2 / 4 * 3 / 4)) / (1 - (2 / 4 * 1 / 4 + 2 / 4 * 3 / 4))
    assert cohen_kappa(a, b).value == pytest.approx(expected, rel=1e-12)


def test_conger_features_mark_each_raters_category():
    table = [["a", "b", None], [None, "a", "a"], ["b", None, "b"]]
    features = conger_measure(table).features
    per_rater = features[:, 2:].reshape(3, 3, 2)  # units x raters x categories
    for u, row in enumerate(table):
        for g, label in enumerate(row):
            expected = [0, 0] if label is None else [label == "a", label == "b"]
            assert per_rater[u, g].tolist() == expected


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("freedom", [1, 2, 3, 7, 30, 312, 2499])
def test_few_groups_factor_is_sqrt_g_over_g_minus_1_times_t_over_z(freedom, level):
    tail = 1 - (1 - level) / 2
    expected = (
        math.sqrt((freedom + 1) / freedom)
        * scipy_stats.t.ppf(tail, freedom)
        / scipy_stats.norm.ppf(tail)
    )
    assert few_groups_factor(freedom, level) == pytest.approx(expected, rel=1e-12)
    assert few_groups_factor(0, level) == 1.0


def test_t_test_p_value_is_scipys_to_the_last_bit():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(2, 120))
        d = rng.choice([-1.0, 0.0, 1.0], n, p=rng.dirichlet([1, 1, 1]))
        if np.ptp(d) == 0:
            continue
        epsilon = float(rng.choice([0.0, 0.1, 0.15, 0.3]))
        expected = scipy_stats.ttest_1samp(d, epsilon, alternative="less").pvalue
        assert p_value(d, epsilon) == float(expected)


def test_resample_groups_are_numbered_by_first_appearance_with_their_first_units_stratum():
    groups = ["t3", "t1", "t3", "t2", "t1", "t4"]
    strata = ["x", "y", "ignored", "x", "ignored", "y"]
    draws, member, count = resample_weights(groups, 40, 5, strata)
    assert member.tolist() == [0, 1, 0, 2, 1, 3]
    assert count == 2
    # Strata {t3, t2} and {t1, t4}: each resample draws two groups from each.
    assert (draws[:, [0, 2]].sum(axis=1) == 2).all()
    assert (draws[:, [1, 3]].sum(axis=1) == 2).all()
    unstratified, member, count = resample_weights(groups, 40, 5)
    assert member.tolist() == [0, 1, 0, 2, 1, 3] and count == 1
    assert (unstratified.sum(axis=1) == 4).all()


def fresh_draws(groups, repetitions, seed, strata=None):
    """numpy's multinomial draws for these groups, as resample_weights made them before it kept
    any: one per stratum of the pooled groups, in order."""
    index = {g: None for g in groups}
    by = {}
    for number, group in enumerate(index):
        first = groups.index(group)
        by.setdefault(None if strata is None else strata[first], []).append(number)
    rng, draws = np.random.default_rng(seed), np.zeros((repetitions, len(index)))
    for members in by.values():
        size = len(members)
        draws[:, members] = rng.multinomial(size, np.full(size, 1 / size), size=repetitions)
    return draws


def test_resample_draws_are_kept_and_give_the_same_numbers_to_each_caller(monkeypatch):
    from annotate.stats import resamples

    monkeypatch.setattr(
        resamples, "_RECENT_DRAWS", resamples._draws_kept(resamples.RECENT_DRAWS_BYTES)
    )
    made = []
    real = resamples._draws
    monkeypatch.setattr(resamples, "_draws", lambda *a: made.append(a) or real(*a))
    groups = [f"t{i % 300}" for i in range(900)]
    strata = [("a" if i % 300 < 120 else "b") for i in range(900)]
    first, _, _ = resample_weights(groups, 500, 11, strata)
    assert np.array_equal(first, fresh_draws(groups, 500, 11, strata))  # the same stream
    first[:] = -1  # a caller's copy is its own
    renamed = [g.replace("t", "trace-") for g in groups]  # other traces, the same structure
    again, _, _ = resample_weights(renamed, 500, 11, strata)
    assert len(made) == 1
    assert again.dtype == np.float64 and np.array_equal(again, fresh_draws(groups, 500, 11, strata))
    other, _, _ = resample_weights(groups, 500, 12, strata)  # another seed: drawn
    assert len(made) == 2 and not np.array_equal(other, again)
    kept = next(iter(resamples._RECENT_DRAWS._values.values()))
    assert kept.dtype == np.uint8  # counts up to 180 (the larger stratum): a byte each


def test_draws_larger_than_the_bound_are_not_kept(monkeypatch):
    from annotate.stats import resamples

    monkeypatch.setattr(resamples, "_RECENT_DRAWS", resamples._draws_kept(1000))
    groups = [f"t{i}" for i in range(50)]
    draws, _, _ = resample_weights(groups, 100, 3)  # 5,000 counts of a byte each
    assert not resamples._RECENT_DRAWS
    assert np.array_equal(draws, fresh_draws(groups, 100, 3))


def test_draws_made_ahead_are_the_same_and_not_drawn_again(monkeypatch):
    """stats.draw_ahead draws on a thread of its own what resample_weights will ask for: the
    caller gets the same stream as a draw of its own, and a draw under way is waited for, not
    started a second time. Catches a key built otherwise than resample_weights' (a second
    draw) and a caller that reads the matrix before it is whole."""
    import threading

    from annotate.stats import resamples

    monkeypatch.setattr(
        resamples, "_RECENT_DRAWS", resamples._draws_kept(resamples.RECENT_DRAWS_BYTES)
    )
    made, inside, release = [], threading.Event(), threading.Event()
    real = resamples._draws

    def slow(*args):
        made.append(args)
        inside.set()
        assert release.wait(30)
        return real(*args)

    monkeypatch.setattr(resamples, "_draws", slow)
    groups = [f"t{i % 300}" for i in range(900)]
    strata = [("a" if i % 300 < 120 else "b") for i in range(900)]
    resamples.draw_ahead(groups, 500, 11, strata)
    assert inside.wait(30)  # under way on its own thread
    got = {}
    caller = threading.Thread(
        target=lambda: got.update(w=resample_weights(groups, 500, 11, strata))
    )
    caller.start()
    wait_until_waiting_for_a_read(caller)  # waiting for the draw under way
    release.set()
    caller.join(30)
    assert len(made) == 1
    assert np.array_equal(got["w"][0], fresh_draws(groups, 500, 11, strata))
    resamples.draw_ahead(groups, 500, 11, strata)  # kept already: nothing drawn
    resamples._AHEAD.submit(lambda: None).result(30)
    assert len(made) == 1


def test_an_interval_leaves_blas_threads_as_they_were():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    before = [lib["num_threads"] for lib in threadpoolctl.threadpool_info()]
    features = np.column_stack([np.ones(40), np.arange(40) % 3 == 0]).astype(float)
    measure = Measure(features, lambda s: ratio(s[..., 1], s[..., 0]), 40, floor=0.0)
    stat = interval(measure, [f"t{i // 2}" for i in range(40)], 200, 1)
    assert stat.low is not None and stat.low <= 14 / 40 <= stat.high
    assert [lib["num_threads"] for lib in threadpoolctl.threadpool_info()] == before
    with _one_blas_thread():
        inside = {lib["user_api"]: lib["num_threads"] for lib in threadpoolctl.threadpool_info()}
    assert inside.get("blas", 1) == 1


BAR = {
    "mark": "bar",
    "data": {"values": [{"x": "a", "y": 2}]},
    "encoding": {
        "x": {"field": "x", "type": "nominal"},
        "y": {"field": "y", "type": "quantitative"},
    },
}


def test_the_chart_engine_starts_once_in_a_helper_process_and_renders_after_it():
    """Catches a warm-up that blocks the numbers (vl-convert holds the GIL while its engine
    starts) or starts a helper per chart."""
    from annotate.report.svg import RENDERER

    render.warm_up()
    helper = RENDERER._process
    render.warm_up()
    assert helper is not None and RENDERER._process is helper and helper.pid != os.getpid()
    svg = render.chart_svg(BAR)
    assert svg.startswith("<svg") and RENDERER._process is helper
    assert render.chart_svg(BAR) == svg


def test_a_refused_chart_says_so_and_the_next_one_renders():
    from annotate.report.svg import ChartError

    with pytest.raises(ChartError, match="vl-convert could not render a chart"):
        render.chart_svg({"mark": "no-such-mark", "data": {"values": []}})
    assert render.chart_svg(BAR).startswith("<svg")


def test_charts_render_in_this_process_when_the_helper_stops_or_cannot_start(monkeypatch):
    """The same SVG whether the helper renders it, died before it could, or never started."""
    import subprocess

    from annotate.report.svg import Renderer

    renderer = Renderer()
    expected = renderer.svg(BAR)
    renderer._process.kill()
    renderer._process.wait()
    assert renderer.svg(BAR) == expected  # a new helper
    renderer._process.stdout.close()  # one that stops answering mid-chart
    assert renderer.svg(BAR) == expected
    renderer.close()

    def no_process(*args, **kwargs):
        raise OSError("no processes left")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    alone = Renderer()
    assert alone.svg(BAR) == expected and alone._process is None


def test_a_rating_table_ordered_by_rank_is_ordered_as_by_repr():
    from annotate.agreement.tables import ranks, rating_table

    labels = {
        "b": {("t-10", 2): "x", ("t-2", 10): "y", ("t 1", 0): "x", ("t'3", 1): "y"},
        "a": {("t-2", 10): "y", ("t-1", 11): "x", ('t"4', 0): "x"},
    }
    units, reviewers, table = rating_table(labels)
    assert units == sorted(units, key=repr) and reviewers == ["a", "b"]
    assert table[units.index(("t-2", 10))] == ["y", "y"]
    rank = ranks(units)
    subset = {r: dict(list(given.items())[1:]) for r, given in labels.items()}
    assert rating_table(subset, rank=rank) == rating_table(subset)
    assert rating_table(subset, rank={("t-2", 10): 0}) == rating_table(subset)  # not all ranked
    assert rating_table(labels, min_ratings=2) == ([("t-2", 10)], ["a", "b"], [["y", "y"]])


@pytest.mark.parametrize("seed", range(20))
def test_bca_levels_with_counts_equal_the_levels_of_the_repeated_jackknife(seed):
    """The trace bootstrap's jackknife has one value per kind of trace: weighting each by its
    count gives the levels of the jackknife with each value repeated (up to summation order)."""
    rng = np.random.default_rng(seed)
    kinds = int(rng.integers(1, 300))
    jack = rng.choice([0.1, 0.2, 0.25, 0.3], kinds) + rng.normal(0, 1e-3, kinds)
    jack[rng.random(kinds) < 0.1] = np.nan
    counts = rng.integers(1, 50, kinds)
    values = rng.normal(0.22, 0.02, 1000)
    repeated = _bca_levels(values, 0.22, np.repeat(jack, counts), 0.95)
    weighted = _bca_levels(values, 0.22, jack, 0.95, counts)
    assert weighted == pytest.approx(repeated, rel=1e-12, abs=1e-15)
