"""`annotate CMD` loads CMD's command group alone; the report builds its charts in the helper.

What keeps `annotate report` quick on a big store: no pandas, no altair in its process (the
chart helper imports them beside the numbers), and one read of the evidence per report.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_calibration import JUDGE, labelled  # noqa: F401 - the fixture

from annotate.cli.main import GROUPS, build_parser
from annotate.labelling.evidence import load_evidence, shared_evidence
from annotate.labelling.session import claim_view, record_verdict
from annotate.report import charts
from annotate.report.svg import ChartError, Renderer
from annotate.store import open_store

ROOT = Path(__file__).resolve().parents[1]


def commands_of(argv: list[str]) -> set[str]:
    parser = build_parser(argv)
    return set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]


def test_each_command_builds_its_own_group_and_the_help_lists_every_command():
    every = commands_of([])
    assert every == {name for _, names in GROUPS.values() for name in names}
    for group, (_, names) in GROUPS.items():
        for name in names:
            assert commands_of([name, "--json"]) == set(names), (group, name)
    assert commands_of(["--help"]) == every and commands_of(["no-such-command"]) == every


def test_the_report_command_loads_neither_pandas_nor_altair_and_draws_its_charts(
    labelled,  # noqa: F811 - the fixture imported above
    db_path,
    tmp_path,
):
    labelled.close()
    out = tmp_path / "report"
    code = (
        "import json, sys\n"
        "from annotate.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print(json.dumps({'code': code, 'loaded': sorted(m for m in ('pandas', 'altair', "
        "'sqlglot', 'anthropic') if m in sys.modules)}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "report", "--judge", JUDGE, "--out", str(out),
         "--db", str(db_path)],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    found = json.loads(done.stdout.splitlines()[-1])
    assert found == {"code": 0, "loaded": []}, done.stderr
    html = (out / "report.html").read_text()
    assert html.count("<svg") == 2  # the confusion matrix and agreement over time
    assert '<figure class="chart" role="img" aria-label="Confusion matrix">' in html


def same_drawing(a: str, b: str) -> bool:
    """Equal SVG up to vl-convert's gradient ids (a counter of its engine)."""
    return re.sub(r"gradient_\d+", "gradient", a) == re.sub(r"gradient_\d+", "gradient", b)


CONFUSION = {"tp": 8, "fp": 2, "fn": 3, "tn": 40}


def test_the_helper_builds_a_report_chart_as_this_process_would():
    renderer = Renderer()
    spec, svg = renderer.chart("confusion", [CONFUSION])
    assert spec == charts.confusion_chart(CONFUSION).to_dict(validate=False)
    assert svg.startswith("<svg") and same_drawing(svg, renderer.svg(spec))
    assert renderer.chart("slices", [[]]) is None  # nothing to draw
    renderer.close()


def test_a_helper_that_cannot_import_the_charts_leaves_them_to_this_process(monkeypatch):
    import annotate.report.svg as svg_module

    renderer = Renderer()
    expected = renderer.chart("confusion", [CONFUSION])
    renderer.close()
    broken = svg_module._CHILD.replace("from annotate.report import charts", "import no_such")
    monkeypatch.setattr(svg_module, "_CHILD", broken)
    alone = Renderer()
    spec, svg = alone.chart("confusion", [CONFUSION])
    assert spec == expected[0] and same_drawing(svg, expected[1])
    assert alone._process is not None and alone._process.poll() is None  # still rendering
    alone.close()


def test_evidence_is_read_once_inside_a_report_and_afresh_after_it(labelled):  # noqa: F811
    with shared_evidence():
        first = load_evidence(labelled, None)
        assert load_evidence(labelled, None) is first
        assert load_evidence(labelled, "demo") is not first  # another scope, its own read

    def alices_first(evidence):
        return next(
            v["label"] for v in evidence.votes
            if v["reviewer"] == "alice" and (v["trace_id"], v["claim_index"]) == ("lt-000", 0)
        )  # fmt: skip

    assert alices_first(first) == "supported"
    latest = labelled.scalar(
        "SELECT max(event_id) FROM label_events WHERE reviewer = 'alice' "
        "AND trace_id = 'lt-000' AND claim_index = 0"
    )
    view = replace(claim_view(labelled, "lt-000", 0), based_on=latest)
    record_verdict(labelled, "alice", view, "contradicted")
    assert alices_first(load_evidence(labelled, None)) == "contradicted"
    with shared_evidence():
        assert alices_first(load_evidence(labelled, None)) == "contradicted"


def test_evidence_is_kept_until_the_store_moves_and_never_across_stores(labelled, tmp_path):  # noqa: F811
    """Agreement, Calibration and Rates each read the evidence on their first visit: one read
    while the store stands still; a verdict, a copy of the store or an open transaction
    reads afresh."""
    first = load_evidence(labelled, None)
    assert load_evidence(labelled, None) is first
    assert load_evidence(labelled.session(), None) is first  # another session of the app
    with labelled.transaction():
        assert load_evidence(labelled, None) is not first  # may read what is not committed
    latest = labelled.scalar(
        "SELECT max(event_id) FROM label_events WHERE reviewer = 'alice' "
        "AND trace_id = 'lt-000' AND claim_index = 0"
    )
    view = replace(claim_view(labelled, "lt-000", 0), based_on=latest)
    record_verdict(labelled, "alice", view, "contradicted")
    after = load_evidence(labelled, None)
    alices = [
        v["label"] for v in after.votes
        if v["reviewer"] == "alice" and (v["trace_id"], v["claim_index"]) == ("lt-000", 0)
    ]  # fmt: skip
    assert after is not first and alices == ["contradicted"]
    labelled.execute("CHECKPOINT")
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(Path(labelled.path).read_bytes())  # the same marks, another file
    other = open_store(copy)
    try:
        assert load_evidence(other, None) is not after
    finally:
        other.close()


@pytest.mark.parametrize("ids", [["t-1", "t-2", "t-1"], ["é-ü", "t 2"]])
def test_id_batches_hold_each_trace_once(labelled, ids):  # noqa: F811
    from annotate.store import id_batch

    batch = id_batch(ids)
    rows = labelled.fetch_with_batch("SELECT trace_id FROM _batch ORDER BY trace_id", batch)
    assert [r[0] for r in rows] == sorted(dict.fromkeys(ids))


def test_a_prefetched_chart_is_the_one_asked_for_later_and_asked_of_the_helper_once(monkeypatch):
    renderer = Renderer()
    asked: list[str] = []
    answer = renderer._answer

    def counted(ask):
        asked.append(ask.get("chart", "spec"))
        return answer(ask)

    monkeypatch.setattr(renderer, "_answer", counted)
    renderer.prefetch("confusion", [CONFUSION])
    renderer.prefetch("confusion", [CONFUSION])  # asked once
    spec, svg = renderer.chart("confusion", [CONFUSION])
    assert asked == ["confusion"] and spec == charts.confusion_chart(CONFUSION).to_dict(
        validate=False
    )
    assert renderer.chart("confusion", [CONFUSION])[0] == spec and asked == ["confusion"] * 2
    renderer.prefetch("no-such-chart", [])
    with pytest.raises(ChartError, match="vl-convert could not render a chart"):
        renderer.chart("no-such-chart", [])
    renderer.close()
