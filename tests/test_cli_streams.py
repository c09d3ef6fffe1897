"""Every command's human-readable result on stdout, messages and progress on stderr (with
--json stdout holds the document alone), and counts in one style: 1,965 everywhere."""

from __future__ import annotations

import re

from conftest import FIXTURES
from rates_data import make_store
from rubric_data import prepare_rubric_store

from annotate.agreement.calibration import save_thresholds
from annotate.cli.rubrics import _print_report
from annotate.judge.rubrics.runner import RunReport, estimate_text
from annotate.store import open_store

GOOD = FIXTURES / "generic" / "production.jsonl"
BARE_COUNT = re.compile(r"(?<![\d,.$])\d{4,}(?![\d,])")  # 1965, not 1,965 nor $0.0040


def test_an_imports_summary_is_its_result_on_stdout(cli):
    done = cli("import", str(GOOD))
    assert done.code == 0
    assert "imported 3, rejected 0" in done.out and "context from: file 2, none 1" in done.out
    assert done.err == ""


def test_the_judge_report_counts_with_separators(capsys):
    report = RunReport("rubric-v2:m", 2, "m", "prod", "sync", claims=1965, already_done=1200,
                       few_shot_excluded=0, to_judge=1965, judged=1965, calls=1965,
                       status="done", estimate={"input_tokens": 1234567, "output_tokens": 294750,
                                                "usd": 2.71, "note": "n"})  # fmt: skip
    _print_report(report)
    out = capsys.readouterr().out
    assert "1,965 claims, 1,200 already judged" in out and "1,965 to judge in 1,965 calls" in out
    assert "1,234,567 input + 294,750 output tokens" in out
    assert "done: 1,965 verdicts, 0 failed" in out
    assert not BARE_COUNT.search(out), out


def test_an_estimate_without_tokens_still_reads(capsys):
    assert estimate_text(
        {"input_tokens": 0, "output_tokens": 0, "usd": 0.0, "note": "offline"}
    ) == ("0 input + 0 output tokens, $0.0 (offline)")


def test_rubric_results_go_to_stdout_and_messages_to_stderr(db_path, tmp_path, cli):
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=90)
    save_thresholds(store, {"cohen_kappa": 0.5, "sensitivity": 0.5, "specificity": None}, "lena")
    store.close()
    judged = cli("judge", "--sample", "loop", "--baseline")
    assert "rubric-v1:offline-baseline on loop (baseline): 180 claims" in judged.out
    assert "calls" in judged.err and "verdicts" not in judged.err  # progress only
    current = cli("rubric", "current", "1")
    assert current.out == "rubric v1 is current\n" and current.err == ""
    assert cli("rubric", "current", "1", "--json").json() == {"current": 1}
    marked = cli("rubric", "calibrate", "1", "--sample", "loop", "--model", "offline-baseline")
    assert marked.code == 0, marked.err
    assert (
        marked.out.splitlines()[-1]
        == "marked rubric v1 calibrated for overall; feature=billing_qa; feature=hr_policy"
    )
    claims = cli("claims", "--sample", "loop")
    assert claims.out.startswith("loop: 90 traces; 0 claims created") and claims.err == ""


def test_rates_details_are_printed_as_text_too(tmp_path, cli):
    db = make_store(tmp_path, {"billing_qa": 0.2, "hr_policy": 0.1}, sample_n=40)
    shown = cli("rates", "--sample", "main", "--details", "--json", "--resamples", "50", db=db)
    document = shown.json()
    text = cli("rates", "--sample", "main", "--details", "--resamples", "50", db=db).out
    assert "error types (weighted share of unsupported gold claims):" in text
    assert document["error_types"]
    for row in document["error_types"]:
        assert f"\t{row['error_type']}\t" in text
    scores = document["scores"]
    assert f"judge scores of prod-judge: {scores['count']:,}, p50 {scores['p50']:.3f}" in text
    for bucket in scores["buckets"]:
        assert f"[{bucket['low']:.3f}, {bucket['high']:.3f})\t{bucket['count']:,}" in text
