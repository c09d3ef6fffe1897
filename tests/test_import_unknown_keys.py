"""Keys no field reads inside a row's context items, claims and judge verdicts: the row is still
imported, with a warning that names the key's path, says it was ignored, lists the object's
fields and suggests the nearest one; in every format that carries such objects, in the CLI's
output and on the Import page."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import plain, run_app

from annotate.accounts.users import User
from annotate.ingest import importer
from annotate.ingest.importer import import_traces
from annotate.ingest.inbox import set_import_folder
from annotate.store import open_store

TEXT = "Refunds take 5 days."
SOURCE_TYPO = (
    '"context[0].soruce" is not a field of a context item (source, text) and was ignored; '
    'did you mean "source"?'
)


def row(trace_id: str = "t-1", **fields: Any) -> dict[str, Any]:
    return {"trace_id": trace_id, "response": TEXT, "context": [TEXT], **fields}


def write_jsonl(path: Path, *rows: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def warnings_of(report) -> list[str]:
    return [str(w) for w in report.warnings]


def test_a_misspelt_context_source_is_imported_with_a_warning(fresh_store, tmp_path):
    path = write_jsonl(
        tmp_path / "t.jsonl", row(context=[{"text": "Refunds: 5 days.", "soruce": "kb/12"}])
    )
    report = import_traces(fresh_store, path)
    assert (report.imported, report.rejected, report.errors) == (1, 0, [])
    assert warnings_of(report) == [f"line 1: {SOURCE_TYPO}"]
    assert fresh_store.fetchall("SELECT text, source FROM contexts WHERE trace_id = 't-1'") == [
        ("Refunds: 5 days.", None)
    ]


def test_claims_and_verdicts_name_each_ignored_key_by_its_path(fresh_store, tmp_path):
    claims = [{"text": TEXT, "start": 0, "end": 20, "strat": 3}]
    judge = [
        {"judge": "j", "level": "response", "label": "supported", "lable": "unsupported"},
        {"judge": "j", "level": "claim", "claim": 0, "label": "supported", "confidence": 0.9},
    ]
    report = import_traces(
        fresh_store, write_jsonl(tmp_path / "t.jsonl", row(claims=claims, judge=judge))
    )
    assert report.imported == 1 and report.errors == []
    verdict_fields = "(judge, level, claim, label, score, explanation, ratings)"
    assert warnings_of(report) == [
        'line 1: "claims[0].strat" is not a field of a claim (text, start, end) and was '
        'ignored; did you mean "start"?',
        f'line 1: "judge[0].lable" is not a field of a judge verdict {verdict_fields} and was '
        'ignored; did you mean "label"?',
        f'line 1: "judge[1].confidence" is not a field of a judge verdict {verdict_fields} and '
        "was ignored; to keep the value, move it to the row's attributes",
    ]
    stored = fresh_store.fetchall("SELECT label FROM judge_verdicts ORDER BY level")
    assert stored == [("supported",), ("supported",)]


def test_a_key_repeated_in_several_items_is_one_warning_for_the_row(fresh_store, tmp_path):
    context = [{"text": f"doc {i}", "id": i} for i in range(3)] + ["plain text"]
    report = import_traces(fresh_store, write_jsonl(tmp_path / "t.jsonl", row(context=context)))
    assert warnings_of(report) == [
        'line 1: "context[0].id" is not a field of a context item (source, text) and was '
        "ignored, here and in 2 other context items of this row; to keep the value, move it "
        "to the row's attributes"
    ]


def test_a_single_verdict_object_and_a_null_unknown_key(fresh_store, tmp_path):
    rows = [
        row("one", judge={"label": "supported", "explanaton": "see kb/12"}),
        row("null", context=[{"text": TEXT, "soruce": None}]),  # nothing dropped: no warning
    ]
    report = import_traces(fresh_store, write_jsonl(tmp_path / "t.jsonl", *rows))
    assert report.imported == 2
    assert warnings_of(report) == [
        'line 1: "judge[0].explanaton" is not a field of a judge verdict (judge, level, claim, '
        'label, score, explanation, ratings) and was ignored; did you mean "explanation"?'
    ]


def test_top_level_unknown_keys_still_become_attributes_without_a_warning(fresh_store, tmp_path):
    report = import_traces(fresh_store, write_jsonl(tmp_path / "t.jsonl", row(tier="pro")))
    assert report.imported == 1 and report.warnings == []
    assert fresh_store.scalar("SELECT attributes->>'tier' FROM traces") == "pro"


def test_an_ignored_key_is_not_content_a_row_without_it_is_a_duplicate(fresh_store, tmp_path):
    typo = row(context=[{"text": TEXT, "soruce": "kb/12"}])
    first = import_traces(fresh_store, write_jsonl(tmp_path / "a.jsonl", typo))
    again = import_traces(fresh_store, write_jsonl(tmp_path / "b.jsonl", row(context=[TEXT])))
    assert first.imported == 1 and (again.duplicates, again.conflicts) == (1, 0)


def test_a_rejected_row_also_names_the_misspelt_key_that_may_be_why(fresh_store, tmp_path):
    path = write_jsonl(tmp_path / "t.jsonl", row(judge=[{"judge": "j", "lable": "supported"}]))
    report = import_traces(fresh_store, path)
    assert report.rejected == 1 and report.warnings == []
    assert [str(e) for e in report.errors] == [
        'line 1: "judge[0].label" must be a non-empty string, got null',
        'line 1: "judge[0].lable" is not a field of a judge verdict (judge, level, claim, label, '
        'score, explanation, ratings) and was ignored; did you mean "label"?',
    ]


def test_csv_json_cells_and_parquet_structs_are_checked_the_same(fresh_store, tmp_path):
    csv = tmp_path / "t.csv"
    cell = json.dumps([{"text": TEXT, "soruce": "kb/12"}]).replace('"', '""')
    csv.write_text(f'trace_id,response,context\nt-1,{TEXT},"{cell}"\n', encoding="utf-8")
    from_csv = import_traces(fresh_store, csv)
    table = pa.Table.from_pylist([row("t-2", context=[{"text": TEXT, "soruce": "kb/12"}])])
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    parquet = tmp_path / "t.parquet"
    parquet.write_bytes(buffer.getvalue())
    from_parquet = import_traces(fresh_store, parquet)
    assert warnings_of(from_csv) == [f"line 2: {SOURCE_TYPO}"]
    assert warnings_of(from_parquet) == [f"row 1: {SOURCE_TYPO}"]
    assert (from_csv.imported, from_parquet.imported) == (1, 1)


def test_the_report_keeps_the_first_warnings_and_counts_them_all(
    fresh_store, tmp_path, monkeypatch
):
    monkeypatch.setattr(importer, "KEPT_ERRORS", 5)
    rows = [row(f"t-{i}", context=[{"text": TEXT, "soruce": "kb"}]) for i in range(30)]
    report = import_traces(fresh_store, write_jsonl(tmp_path / "t.jsonl", *rows))
    assert report.imported == 30 and report.warned == 30
    assert [w.line for w in report.warnings] == [1, 2, 3, 4, 5]


def test_the_cli_prints_the_warnings_exits_0_and_counts_those_not_printed(cli, tmp_path):
    rows = [row(f"t-{i}", context=[{"text": TEXT, "soruce": "kb"}]) for i in range(25)]
    result = cli("import", str(write_jsonl(tmp_path / "t.jsonl", *rows)), "--json")
    assert result.code == 0
    assert result.json()["warnings"][0] == {
        "line": 1,
        "field": "context[0].soruce",
        "message": SOURCE_TYPO.split('" ', 1)[1],
    }
    printed = [line for line in result.err.splitlines() if line.startswith("  warning: ")]
    assert printed[0] == f"  warning: line 1: {SOURCE_TYPO}" and len(printed) == 20
    assert "  ... and 5 more warnings (--json lists the first 25)" in result.err.splitlines()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_import_page_lists_the_warning(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "t.jsonl", row(context=[{"text": TEXT, "soruce": "kb"}]))
    db = tmp_path / "page.duckdb"
    store = open_store(db)
    set_import_folder(store, str(tmp_path))
    store.close()
    monkeypatch.setenv("ANNOTATE_DB", str(db))
    app = run_app(User("lena", "lead"), "pages/import_traces.py")
    app.text_input(key="import_path").input(str(path))
    app.button(key="import_run").click().run()
    assert not app.exception
    assert [plain(c.value) for c in app.caption if "warning" in c.value] == [
        "1 warning on rows imported anyway (claim offsets repaired, unknown keys ignored)"
    ]
    (listed,) = [frame.value for frame in app.dataframe]  # the warnings: no rejected rows
    assert listed.to_dict("records") == [
        {"line": 1, "field": "context[0].soruce", "message": SOURCE_TYPO.split('" ', 1)[1]}
    ]
    assert [plain(s.value) for s in app.success][0].startswith(f"{path} (jsonl): imported 1")
