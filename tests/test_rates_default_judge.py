"""The judge a command or page uses by default (issue 39): the current rubric's judge where it has
verdicts on the sample, else the one with most verdicts, and it is named. An imported production
judge with more verdicts no longer wins over the version the lead has just run."""

from __future__ import annotations

import json

import pytest
from conftest import plain, run_app
from rubric_data import label_rows, trace_rows

from annotate.accounts.users import User

PRODUCTION = "prod-judge"


@pytest.fixture
def two_judges_db(db_path, tmp_path, cli):
    """Six traces whose production judge gave 3 verdicts each (both claims and the response)."""
    rows = trace_rows(6)
    for row in rows:
        row["judge"] = [
            {"judge": PRODUCTION, "level": "claim", "claim": i, "label": "supported"}
            for i in (0, 1)
        ] + [{"judge": PRODUCTION, "level": "response", "label": "supported"}]
    traces, labels = tmp_path / "t.jsonl", tmp_path / "l.jsonl"
    traces.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels.write_text("".join(json.dumps(r) + "\n" for r in label_rows(6)))
    assert cli("import", str(traces)).code == 0
    assert cli("sample", "--name", "loop", "--n", "6", "--by", "feature", "--seed", "1").code == 0
    assert cli("import-labels", str(labels)).code == 0
    return db_path


def test_rates_uses_the_judge_with_most_verdicts_until_the_current_rubric_has_run(
    two_judges_db, cli
):
    before = cli(
        "rates", "--sample", "loop", "--json", "--resamples", "50", "--level", "claim"
    ).json()
    assert before["judge"] == PRODUCTION
    assert before["judge_chosen"] == (
        "the judge with the most verdicts on sample 'loop' (the current rubric v1 has none there)"
    )
    assert cli("judge", "--sample", "loop", "--baseline").code == 0  # 12 verdicts, against 18
    after = cli(
        "rates", "--sample", "loop", "--json", "--resamples", "50", "--level", "claim"
    ).json()
    assert after["judge"] == "rubric-v1:offline-baseline"
    assert after["judge_chosen"] == "the current rubric's judge (rubric v1)"
    text = cli("rates", "--sample", "loop", "--resamples", "50", "--level", "claim")
    assert "judge: rubric-v1:offline-baseline (the current rubric's judge (rubric v1))" in text.err
    given = cli(
        "rates",
        "--sample",
        "loop",
        "--judge",
        PRODUCTION,
        "--json",
        "--resamples",
        "50",
        "--level",
        "claim",
    )
    assert (
        given.json()["judge"] == PRODUCTION and given.json()["judge_chosen"] == "given with --judge"
    )


def test_the_rates_page_defaults_to_the_current_rubrics_judge_and_names_it(
    two_judges_db, cli, monkeypatch
):
    assert cli("judge", "--sample", "loop", "--baseline").code == 0
    monkeypatch.setenv("ANNOTATE_DB", str(two_judges_db))
    app = run_app(User("lena", "lead"), "pages/rates.py")
    assert not app.exception, app.exception
    assert app.selectbox(key="rates_judge").value == "rubric-v1:offline-baseline"
    assert any(
        "Default: the current rubric's judge (rubric v1)" in plain(c.value) for c in app.caption
    )
