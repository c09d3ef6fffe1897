"""The pull's bookkeeping without a server: a page with a bad span is reported by the tool's
trace id while the page's good calls are kept; a rerun fetches nothing it pulled before; a
trace without a call is named. The server here serves get_spans() items written as Phoenix
writes them (tests/test_connectors_phoenix.py pulls from a real one)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from annotate.connectors.pull import pull
from annotate.connectors.server import Listed

GOOD, BAD, EMPTY = "a" * 32, "b" * 32, "c" * 32


def span(trace: str, span_id: str, kind: str, attributes: dict, parent: str | None = None) -> dict:
    return {"name": kind.lower(), "context": {"trace_id": trace, "span_id": span_id},
            "span_kind": kind, "parent_id": parent, "start_time": "2026-03-01T10:00:00+00:00",
            "end_time": "2026-03-01T10:00:01+00:00", "status_code": "OK",
            "attributes": {"openinference.span.kind": kind, **attributes}}  # fmt: skip


def call(trace: str, answer: str | None) -> list[dict]:
    retrieved = {"retrieval.documents.0.document.content": "Refunds take 5 business days."}
    asked = {"llm.model_name": "claude-haiku-4-5", "llm.input_messages.0.message.role": "user",
             "llm.input_messages.0.message.content": "How long do refunds take?"}  # fmt: skip
    if answer is not None:
        asked.update({"llm.output_messages.0.message.role": "assistant",
                      "llm.output_messages.0.message.content": answer, "output.value": answer})  # fmt: skip
    return [
        span(trace, trace[:16], "CHAIN", {}),
        span(trace, "1" + trace[:15], "RETRIEVER", retrieved, trace[:16]),
        span(trace, "2" + trace[:15], "LLM", asked, trace[:16]),
    ]


class RecordedServer:
    """A Phoenix project's trace list and spans as its client returns them; counts fetches."""

    kind, fmt, source = "phoenix", "phoenix_traces", "phoenix http://recorded project p"

    def __init__(self) -> None:
        self.traces = {GOOD: call(GOOD, "Within 5 business days."), BAD: call(BAD, None),
                       EMPTY: [span(EMPTY, EMPTY[:16], "CHAIN", {})]}  # fmt: skip
        self.fetched: list[str] = []

    def list_traces(self, since, until, strata=False):
        for trace in self.traces:
            yield Listed(trace, trace, datetime(2026, 3, 1, tzinfo=UTC))

    def page_rows(self, listed):
        self.fetched.extend(e.tool_id for e in listed)
        return [
            {"trace_id": e.tool_id, "spans": self.traces[e.tool_id], "annotations": []}
            for e in listed
        ]


def test_a_bad_span_is_named_by_its_trace_and_the_good_call_kept(fresh_store):
    server = RecordedServer()
    seen = []
    report = pull(fresh_store, server, progress=lambda done, total: seen.append((done, total)))
    assert (report.listed, report.pulled, report.imported) == (3, 3, 1)
    assert [(trace, field) for trace, field, _ in report.errors] == [(BAD, "output.value")]
    assert report.without_call == [EMPTY] and seen == [(3, 3)]
    stored = fresh_store.fetchall("SELECT trace_id, response FROM traces")
    assert stored == [(GOOD, "Within 5 business days.")]


def test_a_rerun_fetches_nothing_pulled_before_and_a_new_trace_alone(fresh_store):
    server = RecordedServer()
    pull(fresh_store, server, page_size=2)
    server.fetched.clear()
    again = pull(fresh_store, server)
    assert (again.known, again.pulled, server.fetched) == (3, 0, [])
    fresh = "d" * 32
    server.traces[fresh] = call(fresh, "Five business days.")
    third = pull(fresh_store, server)
    assert (third.pulled, third.imported, server.fetched) == (1, 1, [fresh])


def test_an_unreachable_server_is_named_with_what_to_check(cli, tmp_path):
    pytest.importorskip("phoenix.client", reason="the phoenix extra: pip install -e '.[phoenix]'")
    from tests.connectors.servers import free_port

    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    done = cli("import", "--from", "phoenix", url, "--project", "p", db=tmp_path / "new.duckdb")
    assert done.code == 1
    assert done.err.startswith(
        f"error: phoenix {url} project p: listing its traces failed (ConnectError"
    )
    assert "check the address, the project or experiment name" in done.err
    assert not (tmp_path / "new.duckdb").exists()  # a failed first pull leaves no store
