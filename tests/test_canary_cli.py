"""End to end: a canary suite made from the bundled sample data, answered by two scripted
responders (one copies the context's values, one answers from the original values), imported
and scored: 100% and 0% pass rates in the CLI and on the Canary page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, run_app

from annotate.accounts.users import User

SCORE_KEYS = {"group", "n", "followed", "leak", "both", "neither", "pass_rate", "low", "high"}


def responder(suite: Path, out: Path, name: str, values: str) -> int:
    """Answer every item with the values it names: `expected` (fictive) or `original`."""
    rows = [json.loads(line) for line in suite.read_text().splitlines()]
    with out.open("w") as fh:
        for row in rows:
            answer = "From the documents: " + "; ".join(row[values]) + "."
            trace = {
                "trace_id": f"{row['canary_id']}@{name}",
                "request": row["request"],
                "context": row["context"],
                "response": answer,
                "model": name,
                "attributes": {"canary_id": row["canary_id"], "chunking": "500-100"},
            }
            fh.write(json.dumps(trace) + "\n")
    return len(rows)


@pytest.fixture
def scored(cli, tmp_path, db_path, monkeypatch):
    traces = tmp_path / "traces.jsonl"
    lines = (ROOT / "data" / "sample_traces.jsonl").read_text().splitlines(keepends=True)
    traces.write_text("".join(lines[:400]))
    assert cli("import", str(traces)).code == 0
    assert cli("sample", "--name", "m", "--n", "30", "--seed", "2").code == 0
    suite = tmp_path / "suite.jsonl"
    made = cli(
        "canary", "make", "--sample", "m", "--name", "s", "--rule", "halve", "--swap-names",
        "--seed", "9", "--out", str(suite), "--json",
    )  # fmt: skip
    assert made.code == 0, made.err
    n = responder(suite, tmp_path / "copier.jsonl", "copier", "expected")
    assert made.json() == {"name": "s", "items": n, "skipped": made.json()["skipped"]} | {
        "out": str(suite)
    }
    responder(suite, tmp_path / "worldly.jsonl", "worldly", "original")
    for name in ("copier", "worldly"):
        result = cli("canary", "import", "s", str(tmp_path / f"{name}.jsonl"), "--json")
        assert result.code == 0, result.err
        assert result.json()["imported"] == n and result.json()["rejected"] == 0
        outcomes = result.json()["outcomes"]
        assert outcomes == {"followed": n * (name == "copier"), "leak": n * (name == "worldly")} | {
            "both": 0,
            "neither": 0,
        }
    monkeypatch.setenv("ANNOTATE_DB", str(db_path))
    return n


def test_a_copier_passes_every_item_and_a_world_knowledge_responder_none(cli, scored):
    result = cli("canary", "score", "s", "--by", "model", "--json")
    assert result.code == 0, result.err
    rows = {row["group"]["model"]: row for row in result.json()["rows"]}
    assert set(rows) == {"copier", "worldly"}
    for row in rows.values():
        assert set(row) >= SCORE_KEYS and row["method"] == "Wilson" and row["n"] == scored
    copier, worldly = rows["copier"], rows["worldly"]
    assert (copier["followed"], copier["leak"], copier["both"], copier["neither"]) == (
        scored, 0, 0, 0,
    )  # fmt: skip
    assert (worldly["followed"], worldly["leak"]) == (0, scored)
    assert copier["pass_rate"] == 1.0 and copier["high"] == pytest.approx(1.0)
    assert worldly["pass_rate"] == 0.0 and worldly["low"] == 0.0
    assert 0 < worldly["high"] < 0.2 and 0.8 < copier["low"] < 1


def test_a_plan_after_the_replays_counts_them_apart_from_what_the_filters_removed(cli, scored):
    """Catches `filtered_out` counting every replayed response of a suite with no --where."""
    lines = (ROOT / "data" / "sample_traces.jsonl").read_text().splitlines()[:400]
    contexts = [json.loads(line)["context"] for line in lines]
    judgeable = sum(
        any((c if isinstance(c, str) else c.get("text") or "").strip() for c in items or [])
        for items in contexts
    )
    result = cli("sample", "--name", "next", "--n", "20", "--plan-only", "--json")
    assert result.code == 0, result.err
    assert result.json()["frame_size"] == judgeable
    assert result.json()["excluded"] == {
        "no_context": len(lines) - judgeable,
        "filtered_out": 0,
        "canary_replay": 2 * scored,
    }
    assert f"filtered_out 0, canary_replay {2 * scored})" in result.err


def test_the_same_seed_writes_the_same_suite_bytes(cli, scored, tmp_path):
    again = tmp_path / "again.jsonl"
    args = ["--sample", "m", "--rule", "halve", "--swap-names", "--seed", "9", "--out", str(again)]
    assert cli("canary", "make", "--name", "s", *args).code == 2  # the name is taken
    assert cli("canary", "make", "--name", "t", *args).code == 0
    first = (tmp_path / "suite.jsonl").read_text().replace('"s-', '"t-')
    assert again.read_text() == first


def test_a_replay_of_another_suite_is_rejected_by_line_with_exit_1(cli, scored, tmp_path):
    path = tmp_path / "stray.jsonl"
    path.write_text(json.dumps({"trace_id": "z", "response": "r", "context": ["c"]}) + "\n")
    result = cli("canary", "import", "s", str(path), "--json")
    assert result.code == 1
    assert result.json()["errors"][0]["line"] == 1
    assert result.json()["errors"][0]["field"] == "attributes.canary_id"
    assert cli("canary", "score", "nope").code == 2


def test_the_canary_page_shows_the_same_rates_to_a_lead_and_reads_only_for_an_auditor(scored):
    lead = run_app(User("lena", "lead"), "pages/canary.py")
    assert lead.button(key="canary_import") is not None
    lead.multiselect(key="canary_by").set_value(["model"]).run()
    assert not lead.exception, lead.exception
    table = scores_table(lead)
    rates = dict(zip(table["group"], table["pass_rate"], strict=True))
    assert rates == {"model=copier": 1.0, "model=worldly": 0.0}
    auditor = run_app(User("audrey", "auditor"), "pages/canary.py")
    keys = {w.key for w in [*auditor.button, *auditor.text_input, *auditor.number_input]}
    assert not {"canary_import", "canary_name", "canary_seed"} & keys
    auditor.multiselect(key="canary_by").set_value(["model"]).run()
    table = scores_table(auditor)
    assert dict(zip(table["group"], table["pass_rate"], strict=True)) == rates


def scores_table(app):
    (table,) = [d.value for d in app.dataframe if "pass_rate" in d.value.columns]
    return table


def test_a_suite_whose_file_cannot_be_written_is_not_kept(cli, scored, tmp_path, monkeypatch):
    """Catches `canary make` storing the suite, then failing to write its file: the suite's
    name was taken with no way to export it again."""
    args = ["--sample", "m", "--rule", "halve", "--seed", "9"]
    missing = cli("canary", "make", "--name", "u", *args, "--out", str(tmp_path / "no/x.jsonl"))
    assert missing.code == 2 and "does not exist; create it first" in missing.err

    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pathlib.Path.write_bytes", full_disk)
    assert cli("canary", "make", "--name", "u", *args, "--out", str(tmp_path / "u.jsonl")).code
    monkeypatch.undo()
    listed = cli("canary", "make", "--name", "u", *args, "--out", str(tmp_path / "u.jsonl"))
    assert listed.code == 0, listed.err  # the name is free: nothing of the failed make stayed


def test_a_suite_with_no_replay_yet_scores_as_empty(cli, tmp_path):
    """Catches the score of a new suite failing on its labelling queue, which is made only
    when the first response scored 'neither' is imported (the Canary page showed the error)."""
    traces = tmp_path / "traces.jsonl"
    lines = (ROOT / "data" / "sample_traces.jsonl").read_text().splitlines(keepends=True)
    traces.write_text("".join(lines[:100]))
    assert cli("import", str(traces)).code == 0
    assert cli("sample", "--name", "m", "--n", "10", "--seed", "2").code == 0
    made = cli("canary", "make", "--sample", "m", "--name", "new", "--out", str(tmp_path / "n"))
    assert made.code == 0, made.err
    scored = cli("canary", "score", "new", "--json")
    assert scored.code == 0, scored.err
    assert scored.json()["rows"] == []


def test_a_production_sample_can_never_be_a_suites_queue(cli, db_path, tmp_path):
    """Catches a production sample named 'canary:trap' receiving the replays of suite
    'trap' (its strata replaced by one 'canary' stratum), and a suite name ending in a
    newline taken by the name rule."""
    from annotate.store import open_store
    from annotate.store import samples as sample_sql

    traces = tmp_path / "traces.jsonl"
    lines = (ROOT / "data" / "sample_traces.jsonl").read_text().splitlines(keepends=True)
    traces.write_text("".join(lines[:100]))
    assert cli("import", str(traces)).code == 0
    refused = cli("sample", "--name", "canary:trap", "--n", "10")
    assert refused.code == 2 and "kept for canary suites' queues" in refused.err
    assert cli("sample", "--name", "m", "--n", "10", "--seed", "2").code == 0
    store = open_store(db_path)  # a sample of that name from before the rule
    try:
        store.execute("UPDATE samples SET name = 'canary:old' WHERE name = 'm'")
        assert sample_sql.sample_row(store, "canary:old") is not None
    finally:
        store.close()
    assert cli("sample", "--name", "m2", "--n", "10", "--seed", "2").code == 0
    taken = cli("canary", "make", "--sample", "m2", "--name", "old", "--out", str(tmp_path / "o"))
    assert taken.code == 2 and "a sample named 'canary:old' exists" in taken.err
    newline = cli(
        "canary", "make", "--sample", "m2", "--name", "nl\n", "--out", str(tmp_path / "x")
    )
    assert newline.code == 2 and "a suite name is 1-64" in newline.err
