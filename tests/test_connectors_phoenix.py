# ruff: noqa: F811 - the server fixtures are imported by name and taken as arguments
"""Pull from, and push back to, a real Phoenix server holding traces the real OpenInference
instrumentor sent (tests/connectors): every call comes in with its context and the judge
score Phoenix holds, a rerun pulls nothing twice, the tool's own export of the same traces
imports to the same rows, and the reviewers' gold and our judge's verdicts read back with
Phoenix's own client, once each, with their notes and error types, after two pushes."""

from __future__ import annotations

import json

import pytest

from annotate.connectors import MissingExtraError, client_module
from annotate.connectors.phoenix import PhoenixServer
from annotate.connectors.pull import pull
from annotate.ingest.importer import import_traces
from annotate.store import open_store
from tests.connectors.fixtures import CALLS, PROJECT, RAG_PROJECT, ROUNDS, phoenix_url  # noqa: F401
from tests.connectors.flow import (
    NOTE,
    call_rows,
    export_feedback,
    labelled_sample,
    relabel,
    span_of,
    stored,
)
from tests.connectors.servers import ROOT
from tests.producers.traffic import KINDS

# One worker runs this file, so the phoenix server starts once per run (make test: --dist loadfile).


def client(url: str):
    from phoenix.client import Client

    return Client(base_url=url)


def test_missing_client_names_the_extra(monkeypatch):
    monkeypatch.setitem(
        __import__("annotate.connectors").connectors.EXTRAS, "phoenix", "phoenix.not_installed"
    )
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[phoenix\]'"):
        client_module("phoenix")


def test_pull_brings_every_call_with_context_and_judge_score_once(phoenix_url, tmp_path, cli):
    phoenix = client(phoenix_url)
    llm = phoenix.spans.get_spans(project_identifier=PROJECT, span_kind="LLM", limit=1000)
    judged = next(s for s in llm if "toaster" in json.dumps(s.get("attributes", {})))
    phoenix.spans.add_span_annotation(
        span_id=judged["context"]["span_id"], annotation_name="hallucination",
        annotator_kind="LLM", label="factual", score=0.0, explanation="grounded", sync=True,
    )  # fmt: skip
    db = tmp_path / "pull.duckdb"
    first = cli("import", "--from", "phoenix", phoenix_url, "--project", PROJECT, "--json", db=db)
    assert first.code == 0, first.err
    assert (first.json()["imported"], first.json()["errors"]) == (CALLS, [])
    assert f"pulled {first.json()['pulled']} of {first.json()['pulled']} new traces" in first.err
    again = cli("import", "--from", "phoenix", phoenix_url, "--project", PROJECT, "--json", db=db)
    assert (again.json()["pulled"], again.json()["imported"]) == (0, 0)
    pulled = call_rows(db)
    answers = [e.answer for e in KINDS.values()] * ROUNDS
    assert sorted(r[2] for r in pulled) == sorted(answers), "every call, answered as it was"
    assert all(any(e.question in r[1] for e in KINDS.values()) for r in pulled)
    assert all(r[3] for r in pulled), "every call came with its context"
    verdicts = stored(
        db,
        "SELECT v.judge, v.label FROM judge_verdicts v JOIN traces t USING (trace_id) "
        "WHERE json_extract_string(t.attributes, '$.otel_span_id') = ?",
        [judged["context"]["span_id"]],
    )
    assert verdicts == [("LLM/hallucination", "factual")]
    # the tool's own export of the same traces imports to the same rows
    frame = phoenix.spans.get_spans_dataframe(project_identifier=PROJECT, limit=10_000)
    frame.to_parquet(tmp_path / "export.parquet")
    exported = open_store(tmp_path / "export.duckdb")
    import_traces(exported, tmp_path / "export.parquet")
    exported.close()
    assert call_rows(tmp_path / "export.duckdb") == pulled


def test_since_and_until_bound_the_pull(phoenix_url, fresh_store):
    server = PhoenixServer(phoenix_url, PROJECT)
    listed = list(server.list_traces(None, None))
    last = listed[-1].start
    report = pull(fresh_store, server, since=last)
    assert report.listed == sum(1 for t in listed if t.start >= last) >= 1
    assert pull(fresh_store, server, until=listed[0].start).listed == 0


def ours(phoenix, span_ids: list[str]) -> list[dict]:
    return [
        a
        for a in phoenix.spans.get_span_annotations(span_ids=span_ids, project_identifier=PROJECT)
        if a["name"].startswith("annotate.")
    ]


def test_pushed_verdicts_read_back_once_each_with_note_and_error_type(phoenix_url, tmp_path, cli):
    db = tmp_path / "push.duckdb"
    claims, wrong = labelled_sample(cli, "phoenix", phoenix_url, PROJECT, db, CALLS)
    traces = sorted({t for t, _ in claims})
    spans = {trace: span_of(db, trace) for trace in traces}
    push = export_feedback("phoenix", phoenix_url, PROJECT)
    preview = cli(*push, "--dry-run", "--json", db=db).json()
    assert (preview["human"], preview["not_from_this_server"]) == (len(traces), 0)
    first = cli(*push, "--json", db=db).json()
    assert (first["human"], first["llm"]) == (preview["human"], preview["llm"]) and first["llm"] > 0
    second = cli(*push, "--json", db=db).json()
    assert (second["to_send"], second["unchanged"]) == (0, first["to_send"])
    phoenix = client(phoenix_url)
    found = ours(phoenix, list(spans.values()))
    gold = [a for a in found if a["name"] == "annotate.gold"]
    assert sorted(a["span_id"] for a in gold) == sorted(spans.values())  # once per trace
    assert {a["annotator_kind"] for a in gold} == {"HUMAN"}
    wrong_gold = next(a for a in gold if a["span_id"] == spans[wrong[0]])
    assert wrong_gold["result"]["label"] == "unsupported"
    assert NOTE in wrong_gold["result"]["explanation"]
    assert "error type: number" in wrong_gold["result"]["explanation"]
    assert json.loads(wrong_gold["metadata"]["unsupported_claims"])[0]["error_type"] == "number"
    assert {a["result"]["label"] for a in gold if a is not wrong_gold} == {"supported"}
    judge = [a for a in found if a["name"] == "annotate.judge"]
    assert len(judge) == first["llm"] and {a["annotator_kind"] for a in judge} == {"LLM"}
    assert len({a["span_id"] for a in judge}) == len(judge)
    card = phoenix.projects.get(project_name=PROJECT)["description"]
    assert card.startswith("annotate calibration card: judge ") and "sensitivity" in card


def test_a_changed_label_updates_its_annotation_never_adds_one(phoenix_url, tmp_path, cli):
    db = tmp_path / "change.duckdb"
    claims, wrong = labelled_sample(cli, "phoenix", phoenix_url, PROJECT, db, CALLS)
    push = export_feedback("phoenix", phoenix_url, PROJECT)
    assert cli(*push, db=db).code == 0
    relabel(cli, db, wrong)
    again = cli(*push, "--json", db=db).json()
    assert (again["human"], again["llm"]) == (1, 0)
    span = span_of(db, wrong[0])
    gold = [a for a in ours(client(phoenix_url), [span]) if a["name"] == "annotate.gold"]
    assert [a["result"]["label"] for a in gold] == ["supported"]


def test_a_sample_from_the_server_equals_the_sample_of_its_export_imported(
    phoenix_url, tmp_path, cli
):
    """Drawn from the trace list (ids and model only), only the drawn traces fetched; the same
    traces exported by Phoenix, imported and sampled with the same seed: the same sample."""
    args = ("--name", "s", "--n", "3", "--by", "model", "--seed", "11", "--json")
    server = cli(
        "sample",
        "--from",
        "phoenix",
        phoenix_url,
        "--project",
        RAG_PROJECT,
        *args,
        db=tmp_path / "server.duckdb",
    )
    assert server.code == 0, server.err
    frame = client(phoenix_url).spans.get_spans_dataframe(
        project_identifier=RAG_PROJECT, limit=10_000
    )
    frame.to_parquet(tmp_path / "export.parquet")
    assert cli("import", str(tmp_path / "export.parquet"), db=tmp_path / "file.duckdb").code == 0
    from_file = cli("sample", *args, db=tmp_path / "file.duckdb")
    drawn, expected = server.json(), from_file.json()
    assert drawn["trace_ids"] == expected["trace_ids"] and len(drawn["trace_ids"]) == 3
    assert drawn["strata"] == expected["strata"]  # the same N_h, n_h and inclusion probability
    fetched = stored(tmp_path / "server.duckdb", "SELECT count(*) FROM traces")[0][0]
    assert fetched == 3 < expected["frame_size"]  # only the drawn traces came in


def test_the_pages_pull_then_send_after_a_preview_leads_only(
    phoenix_url, tmp_path, monkeypatch, cli
):
    from conftest import open_tab, run_app

    from annotate.accounts.users import User

    db = tmp_path / "pages.duckdb"
    monkeypatch.setenv("ANNOTATE_DB", str(db))
    lead = User("lena", "lead")
    app = run_app(lead, "pages/import_traces.py")
    app.selectbox(key="import_server_kind").set_value("phoenix")
    app.text_input(key="import_server_url").set_value(phoenix_url)
    app.text_input(key="import_server_name").set_value(PROJECT)
    app.button(key="import_server_run").click().run()
    assert not app.exception, app.exception
    assert f"{CALLS} calls imported" in app.success[0].value.replace("\\", "")
    claims, _wrong = labelled_sample(cli, "phoenix", phoenix_url, PROJECT, db, CALLS)
    traces = {t for t, _ in claims}
    app = open_tab(run_app(lead, "pages/rates.py"), "rates_tab", "Threshold and exports")
    app.selectbox(key="rates_server_kind").set_value("phoenix")
    app.text_input(key="rates_server_url").set_value(phoenix_url)
    app.text_input(key="rates_server_name").set_value(PROJECT)
    app.button(key="rates_server_preview").click().run()
    preview = " ".join(c.value for c in app.caption).replace("\\", "")
    assert f"{len(traces)} human verdicts" in preview, preview
    app.button(key="rates_server_send").click().run()
    assert not app.exception, app.exception
    assert f"Sent {len(traces)} human verdicts" in app.success[-1].value.replace("\\", "")
    spans = [span_of(db, trace) for trace in traces]
    gold = [a for a in ours(client(phoenix_url), spans) if a["name"] == "annotate.gold"]
    assert sorted(a["span_id"] for a in gold) == sorted(spans)
    auditor = run_app(User("audrey", "auditor"), "pages/rates.py")
    shown = [s.value for s in open_tab(auditor, "rates_tab", "Threshold and exports").subheader]
    assert "Downloads" in shown and "Send to Phoenix or MLflow" not in shown


def test_the_pull_bench_runs_at_a_tiny_size_beside_its_baseline(phoenix_url):
    """bench_connector_pull needs a Phoenix server, so the bench smoke test (no servers) leaves
    it out; it runs here, at five traces, against this session's server."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ANNOTATE_BENCH_CONNECTOR": "5", "ANNOTATE_BENCH_PHOENIX_URL": phoenix_url}
    done = subprocess.run([sys.executable, "-m", "tests.bench", "connector_pull"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "baseline, the tool's own export" in done.stdout and "ratio pull / export" in done.stdout
    assert "5 calls of 5 traces pulled" in done.stdout
