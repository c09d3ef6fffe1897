"""`--context` chooses where a call's context comes from (retrieval, tools, documents, prompt),
and the import report counts traces by where theirs came from."""

from __future__ import annotations

import pytest

from annotate.errors import UsageError
from annotate.ingest.call_context import ALL_CONTEXT, chosen, parse_context_kinds
from annotate.ingest.importer import import_traces
from tests.producers import traffic

RETRIEVED = {"source": "retrieval kb/1", "text": "Refunds take 5 days."}
SYSTEM = {"source": "system", "text": "Answer from: Refunds take 5 days."}
TOOL = {"source": "tool lookup_order", "text": '{"status": "delivered"}'}


def test_the_prompt_counts_only_for_a_call_given_nothing_else():
    candidates = {"retrieval": [RETRIEVED], "tools": [], "documents": [], "prompt": [SYSTEM]}
    assert chosen(candidates, ALL_CONTEXT) == ([RETRIEVED], "retrieval")
    assert chosen(candidates, frozenset({"prompt"})) == ([SYSTEM], "prompt")
    assert chosen({"prompt": [SYSTEM]}, ALL_CONTEXT) == ([SYSTEM], "prompt")
    assert chosen({"tools": [TOOL], "retrieval": [RETRIEVED]}, ALL_CONTEXT) == (
        [RETRIEVED, TOOL],
        "retrieval,tools",
    )
    assert chosen({"tools": [TOOL]}, frozenset({"retrieval"})) == ([], "none")


def test_the_same_text_twice_is_kept_once():
    twice = {"source": "document 1", "text": RETRIEVED["text"]}
    assert chosen({"retrieval": [RETRIEVED], "documents": [twice]}, ALL_CONTEXT) == (
        [RETRIEVED],
        "retrieval,documents",
    )


def test_context_kinds_are_checked_by_name():
    assert parse_context_kinds(None) == ALL_CONTEXT
    assert parse_context_kinds("all") == ALL_CONTEXT
    assert parse_context_kinds(" Retrieval, tools ") == {"retrieval", "tools"}
    with pytest.raises(UsageError) as caught:
        parse_context_kinds("retrieval,tool")
    assert str(caught.value) == (
        "--context 'retrieval,tool': 'tool' is not a kind of context; name one or more of "
        "retrieval,tools,documents,prompt (or all)"
    )


def test_the_report_counts_traces_by_where_their_context_came_from(produced, fresh_store):
    report = import_traces(fresh_store, produced("openinference"))
    assert report.context_from == {"prompt": 2, "documents": 1, "tools": 1}
    assert report.as_json()["context_from"] == {"documents": 1, "prompt": 2, "tools": 1}


def test_without_the_prompt_a_pasted_document_call_is_not_judgeable(produced, fresh_store):
    kinds = frozenset({"retrieval", "tools", "documents"})
    report = import_traces(fresh_store, produced("openllmetry"), context=kinds)
    assert report.context_from == {"none": 2, "documents": 1, "tools": 1}
    judgeable = dict(fresh_store.fetchall("SELECT response, judgeable FROM traces"))
    assert judgeable[traffic.PASTED.answer] is False
    assert judgeable[traffic.STREAMED.answer] is False
    assert judgeable[traffic.TOOL_CALL.answer] is True


def test_the_cli_takes_context_and_prints_where_it_came_from(cli, produced):
    result = cli("import", str(produced("openllmetry")), "--context", "tools,prompt")
    assert result.code == 0, result.err
    assert "context from: none 1, prompt 2, tools 1" in result.out + result.err
    bad = cli("import", str(produced("openllmetry")), "--context", "web")
    assert bad.code == 2
    assert "'web' is not a kind of context" in bad.err
