# ruff: noqa: F811 - the server fixtures are imported by name and taken as arguments
"""Pull from, and push back to, a real MLflow tracking server holding traces that
`mlflow.anthropic.autolog()` logged (tests/connectors): every call comes in with its context
and the LLM_JUDGE feedback MLflow holds, a rerun pulls nothing twice, and the reviewers' gold
(source HUMAN, rationale) and our judge's verdicts (LLM_JUDGE) read back with MLflow's own
client, once each, with their notes and error types, and the card on the experiment."""

from __future__ import annotations

import json

from tests.connectors.fixtures import PROJECT, RAG_PROJECT, ROUNDS, mlflow_url  # noqa: F401
from tests.connectors.flow import NOTE, call_rows, export_feedback, labelled_sample, relabel, stored
from tests.producers.traffic import KINDS

# MLflow's autolog patches Messages.create, not messages.stream(): the streamed kind's trace
# holds no model call, so three of the four kinds are calls there
TRACED = [e for e in KINDS.values() if e.kind != "streamed"]
CALLS = len(TRACED) * ROUNDS

# One worker runs this file, so the mlflow server starts once per run (make test: --dist loadfile).


def clients(url: str):
    from mlflow import MlflowClient
    from mlflow.tracing.client import TracingClient

    return MlflowClient(tracking_uri=url), TracingClient(tracking_uri=url)


def experiment_traces(url: str, name: str = PROJECT) -> list:
    client, tracing = clients(url)
    experiment = client.get_experiment_by_name(name).experiment_id
    return list(tracing.search_traces(experiment_ids=[experiment], max_results=500))


def test_pull_brings_every_call_with_context_and_judge_feedback_once(mlflow_url, tmp_path, cli):
    from mlflow.entities import AssessmentSource, Feedback

    _, tracing = clients(mlflow_url)
    toaster = next(t for t in experiment_traces(mlflow_url) if "toaster" in t.to_json())
    tracing.log_assessment(toaster.info.trace_id, Feedback(
        name="groundedness", value="yes", rationale="every claim is in the policy",
        source=AssessmentSource("LLM_JUDGE", "gpt-judge"), trace_id=toaster.info.trace_id,
    ))  # fmt: skip
    db = tmp_path / "pull.duckdb"
    pull = ("import", "--from", "mlflow", mlflow_url, "--experiment", PROJECT, "--json")
    first = cli(*pull, db=db)
    assert first.code == 0, first.err
    found = first.json()
    assert (found["imported"], found["errors"], found["without_call"]) == (CALLS, [], ROUNDS)
    again = cli(*pull, db=db).json()
    assert (again["pulled"], again["imported"], again["known"]) == (0, 0, found["listed"])
    pulled = call_rows(db)
    assert sorted(r[2] for r in pulled) == sorted([e.answer for e in TRACED] * ROUNDS)
    assert all(r[3] for r in pulled), "every call came with its context"
    verdicts = stored(
        db,
        "SELECT v.judge, v.label, v.explanation FROM judge_verdicts v JOIN traces t USING (trace_id) "
        "WHERE json_extract_string(t.attributes, '$.otel_trace_id') = ?",
        [toaster.info.trace_id.removeprefix("tr-")],
    )
    assert verdicts == [("gpt-judge/groundedness", "yes", "every claim is in the policy")]


def ours(url: str, trace_id: str) -> list:
    _, tracing = clients(url)
    trace = tracing.get_trace(trace_id)
    return [a for a in trace.info.assessments if a.name.startswith("annotate.") and a.valid]


def test_pushed_verdicts_read_back_once_each_with_note_and_error_type(mlflow_url, tmp_path, cli):
    db = tmp_path / "push.duckdb"
    claims, wrong = labelled_sample(cli, "mlflow", mlflow_url, PROJECT, db, CALLS)
    push = export_feedback("mlflow", mlflow_url, PROJECT)
    first = cli(*push, "--json", db=db).json()
    assert first["human"] == len({t for t, _ in claims}) and first["llm"] > 0
    second = cli(*push, "--json", db=db).json()
    assert (second["to_send"], second["unchanged"]) == (0, first["to_send"])
    relabel(cli, db, claims[-1], "not_in_context")  # a change: sent once more, as an update
    third = cli(*push, "--json", db=db).json()
    assert (third["human"], third["llm"]) == (1, 0)
    for trace in sorted({t for t, _ in claims}):
        found = ours(mlflow_url, f"tr-{trace.split('-')[0]}")
        gold = [a for a in found if a.name == "annotate.gold"]
        judge = [a for a in found if a.name == "annotate.judge"]
        assert len(gold) == 1 and gold[0].source.source_type == "HUMAN"
        assert len(judge) <= 1 and all(a.source.source_type == "LLM_JUDGE" for a in judge)
        expected = "unsupported" if trace in (wrong[0], claims[-1][0]) else "supported"
        assert gold[0].value == expected
        if trace == wrong[0]:
            assert NOTE in gold[0].rationale and "error type: number" in gold[0].rationale
            assert json.loads(gold[0].metadata["unsupported_claims"])[0]["error_type"] == "number"
    client, _ = clients(mlflow_url)
    tags = client.get_experiment_by_name(PROJECT).tags
    assert tags["annotate.calibration_card.s"].startswith("annotate calibration card: judge ")


def test_a_sample_from_the_server_equals_the_sample_of_the_same_traces_pulled(
    mlflow_url, tmp_path, cli
):
    """Drawn from MLflow's trace list (ids and the traces' tags: MLflow tags a trace, and the
    import reads the same tags), only the drawn traces fetched; the same experiment pulled
    whole and sampled with the same seed: the same sample, stratum for stratum.
    The experiment holds one call per trace (no streamed call, no tool step), as the rule needs."""
    _, tracing = clients(mlflow_url)
    for index, trace in enumerate(experiment_traces(mlflow_url, RAG_PROJECT)):
        tracing.set_trace_tag(trace.info.trace_id, "feature", ("billing", "returns")[index % 2])
    args = ("--name", "s", "--n", "4", "--by", "feature", "--seed", "11", "--json")
    where = ("mlflow", mlflow_url, "--experiment", RAG_PROJECT)
    server = cli("sample", "--from", *where, *args, db=tmp_path / "server.duckdb")
    assert server.code == 0, server.err
    pulled = cli("import", "--from", *where, db=tmp_path / "file.duckdb")
    assert pulled.code == 0, pulled.err
    from_file = cli("sample", *args, db=tmp_path / "file.duckdb")
    assert from_file.code == 0, from_file.err
    drawn, expected = server.json(), from_file.json()
    assert drawn["trace_ids"] == expected["trace_ids"] and len(drawn["trace_ids"]) == 4
    assert drawn["strata"] == expected["strata"]  # the same N_h, n_h and inclusion probability
    fetched = stored(tmp_path / "server.duckdb", "SELECT count(*) FROM traces")[0][0]
    assert fetched == 4 < expected["frame_size"]  # only the drawn traces came in
