# ruff: noqa: F811 - the fake_anthropic fixture is imported by name
"""The judge's run against what a server or an interruption can do to it: a 200 whose body is
cut short or is no Messages answer, a batch stopped while its results were being stored, a
bad --poll-seconds, failures of another sample, and a response answer that names a claim
twice or by `true`. Each is a recorded failure or a usage error, never a crash or a guess."""

from __future__ import annotations

import json

import pytest
from fake_anthropic import Reply, fake_anthropic, message  # noqa: F401 - the fixture
from judge_fakes import answer
from rubric_data import prepare_rubric_store

from annotate.judge import llm
from annotate.judge.rubrics import batches
from annotate.judge.rubrics.runner import run_judge
from annotate.judge.rubrics.versions import edit_rubric
from annotate.sampling.allocation import SampleSpec
from annotate.sampling.samples import draw_sample
from annotate.store import judge_runs as run_sql
from annotate.store import open_store

FAST = llm.Retry(attempts=3, timeout=5.0, base_wait=0.01)


@pytest.fixture
def loop_store(fresh_store, tmp_path):
    return prepare_rubric_store(fresh_store, tmp_path, count=6)


def judge_calls(store) -> list[dict]:
    return store.fetch_dicts("SELECT * FROM llm_calls WHERE purpose = 'judge' ORDER BY id")


@pytest.mark.parametrize(
    "body",
    [b'{"id": "msg_01", "type": "mess', {"id": "msg_01", "type": "message"}],
    ids=["cut short", "no messages answer"],
)
def test_a_200_that_is_no_answer_is_a_recorded_failure_and_the_rest_is_judged(
    loop_store, fake_anthropic, body
):
    """Catches a run that crashed (exit 4) on a 200 whose body did not parse as a message."""
    fake_anthropic.responder = answer
    fake_anthropic.reply(200, body)
    report = run_judge(
        loop_store, "loop", client=fake_anthropic.client(), retry=FAST, concurrency=1
    )
    assert (report.judged, report.failed, report.status) == (11, 1, "failed")
    [failure] = report.failures
    assert failure["error"].startswith("the judge call failed: the response")
    call = run_sql.llm_call(loop_store, failure["llm_call_id"])
    assert call["error"] and call["request_id"] is None
    assert len(judge_calls(loop_store)) == 12  # every call recorded once
    rerun = run_judge(loop_store, "loop", client=fake_anthropic.client(), retry=FAST)
    assert (rerun.judged, rerun.failed, rerun.status) == (1, 0, "done")


def test_a_batch_stopped_while_storing_results_resumes_without_recording_a_call_twice(
    loop_store, fake_anthropic, monkeypatch
):
    """Catches a resumed batch that recorded again the calls stored before Ctrl-C (their cost
    counted twice) and reported them as judged again."""
    fake_anthropic.responder = answer
    fake_anthropic.batch_polls = 0
    stored, real = [], batches.store_outcome

    def interrupted(*args, **kwargs):
        if len(stored) == 3:
            raise KeyboardInterrupt
        stored.append(real(*args, **kwargs))

    monkeypatch.setattr(batches, "store_outcome", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_judge(loop_store, "loop", client=fake_anthropic.client(), batch=True, poll_seconds=0.01)
    monkeypatch.setattr(batches, "store_outcome", real)
    judge = "rubric-v1:claude-haiku-4-5"
    assert len(run_sql.judged_claims(loop_store, judge)) == 3
    assert len(judge_calls(loop_store)) == 3  # the 4th call's record went with its verdict
    rerun = run_judge(
        loop_store, "loop", client=fake_anthropic.client(), batch=True, poll_seconds=0.01
    )
    assert (rerun.judged, rerun.already_done, rerun.status) == (9, 3, "done")
    calls = judge_calls(loop_store)
    assert len(calls) == 12 and {c["batch_id"] for c in calls} == {"msgbatch_fake_1"}
    assert len(run_sql.judged_claims(loop_store, judge)) == 12
    assert len([r for r in fake_anthropic.requests if "requests" in r]) == 1


def test_a_run_lists_only_the_failures_of_its_own_claims(loop_store, fake_anthropic):
    """Catches a run on one sample listing (as 'rerun to retry these') another sample's failed
    claims, which that rerun never retries."""
    draw_sample(loop_store, SampleSpec(name="other", n=2, by=("feature",), seed=5))
    other = {
        t
        for (t,) in loop_store.fetchall("SELECT trace_id FROM sample_units WHERE sample = 'other'")
    }
    outside = next(f"rt-{i:03d}" for i in range(6) if f"rt-{i:03d}" not in other)
    fake_anthropic.responder = answer
    needle = f"INV-{1000 + int(outside[3:])} was issued by Acme Billing.\\n</claim>"
    fake_anthropic.reply(200, message("not json"), when=needle)
    first = run_judge(loop_store, "loop", client=fake_anthropic.client(), retry=FAST)
    assert [(f["trace_id"], f["claim_index"]) for f in first.failures] == [(outside, 0)]
    loop_store.execute(
        "DELETE FROM judge_verdicts WHERE trace_id IN (SELECT trace_id FROM sample_units WHERE sample = 'other')"
    )
    second = run_judge(loop_store, "other", client=fake_anthropic.client(), retry=FAST)
    assert (second.judged, second.failed, second.failures) == (4, 0, [])


def test_a_poll_interval_that_is_not_positive_is_a_usage_error_before_any_call(
    db_path, tmp_path, cli, fake_anthropic, monkeypatch
):
    """Catches --poll-seconds -1 submitting a batch and then crashing (exit 4) in sleep."""
    store = open_store(db_path)
    prepare_rubric_store(store, tmp_path, count=6)
    store.close()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.responder = answer
    for bad in ("-1", "0", "nan"):
        result = cli("judge", "--sample", "loop", "--batch", "--poll-seconds", bad)
        assert result.code == 2 and "--poll-seconds" in result.err, (bad, result.err)
    assert fake_anthropic.requests == []
    assert cli("status", "--json").json()["judge_verdicts"] == 0


def _verdict(claim) -> dict:
    return {"claim": claim, "reasoning": "", "label": "supported", "error_type": "none",
            "evidence": ""}  # fmt: skip


@pytest.mark.parametrize(
    "verdicts",
    [[_verdict(0), _verdict(0), _verdict(1)], [_verdict(True), _verdict(0)]],
    ids=["a claim twice", "claim true"],
)
def test_a_response_answer_that_names_a_claim_twice_is_a_parse_error(
    loop_store, fake_anthropic, verdicts
):
    """Catches two verdicts for claim 0 (or `"claim": true` read as claim 1) stored as if
    every claim had its own: one of them was a guess."""
    rubric = edit_rubric(loop_store, 1, {"granularity": "response"}, "lena")
    body = message(json.dumps({"verdicts": verdicts}))
    fake_anthropic.responder = lambda request: Reply(200, body)
    report = run_judge(
        loop_store, "loop", rubric.version, client=fake_anthropic.client(), retry=FAST
    )
    assert (report.judged, report.failed) == (0, 12)
    assert all("did not parse" in f["error"] for f in report.failures)
    assert loop_store.scalar("SELECT count(*) FROM judge_verdicts") == 0


def test_a_batch_request_the_results_leave_out_is_a_recorded_failure(
    loop_store, fake_anthropic, monkeypatch
):
    """Caught: a request with no result in an ended batch was skipped without a word: the run
    said "done" (exit 0) and its claims had no verdict and no failure to retry."""
    fake_anthropic.responder = answer
    serve = fake_anthropic._get

    def first_result_lost(path: str) -> Reply:
        reply = serve(path)
        if path.rstrip("/").endswith("/results"):
            lines = reply.body.splitlines(keepends=True)  # type: ignore[union-attr]
            reply = Reply(reply.status, b"".join(lines[1:]))
        return reply

    monkeypatch.setattr(fake_anthropic, "_get", first_result_lost)
    report = run_judge(
        loop_store, "loop", client=fake_anthropic.client(), batch=True, poll_seconds=0.01
    )
    assert (report.judged, report.failed, report.status) == (11, 1, "failed")
    [failure] = report.failures
    assert "batch request with no result" in failure["error"]
    assert len(judge_calls(loop_store)) == 12  # the lost one recorded as a failed call
    monkeypatch.setattr(fake_anthropic, "_get", serve)
    rerun = run_judge(
        loop_store, "loop", client=fake_anthropic.client(), batch=True, poll_seconds=0.01
    )
    assert (rerun.judged, rerun.failed, rerun.status) == (1, 0, "done")
