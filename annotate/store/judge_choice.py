"""Verdict counts per judge, on one sample's traces and in all: what the default judge is
chosen from (annotate.judge.default)."""

from __future__ import annotations

from annotate.store import Store


def verdict_counts(store: Store, sample: str | None = None) -> list[tuple[str, int, int]]:
    """(judge, verdicts on the sample's traces, verdicts in all), most on the sample first;
    without a sample both counts are the store's."""
    if sample is None:
        rows = store.fetchall(
            "SELECT judge, count(*), count(*) FROM judge_verdicts GROUP BY judge "
            "ORDER BY count(*) DESC, judge"
        )
    else:
        rows = store.fetchall(
            "SELECT judge, count(*) FILTER (WHERE trace_id IN "
            "(SELECT trace_id FROM sample_units WHERE sample = ?)) AS on_sample, count(*) "
            "FROM judge_verdicts GROUP BY judge ORDER BY on_sample DESC, count(*) DESC, judge",
            [sample],
        )
    return [(str(judge), int(on), int(total)) for judge, on, total in rows]
