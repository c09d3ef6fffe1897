"""The runtime grounding check (issue 40): a calibrated export judged through the real SDK
against the local fake gives the verdicts `annotate judge` gave on the same claims, with the
same prompts; the fallback on a late or failed judge is never true; bad input is named."""

# ruff: noqa: F811 - the fake_anthropic fixture is imported by name
from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_anthropic import Reply, fake_anthropic, message  # noqa: F401 - the fixture
from judge_fakes import answer
from rubric_data import is_wrong, prepare_rubric_store, trace_rows

from annotate.agreement.calibration import save_thresholds
from annotate.check import UNKNOWN, CheckInputError, GroundingCheck
from annotate.check.export import RubricExport, export_of
from annotate.errors import InputError, UsageError
from annotate.judge.rubrics.exchange import export_yaml
from annotate.judge.rubrics.loop import mark_calibrated
from annotate.judge.rubrics.rubric_file import read_document
from annotate.judge.rubrics.runner import run_judge
from annotate.judge.rubrics.spec import content_hash
from annotate.judge.rubrics.versions import BASELINE_MODEL, edit_rubric, make_current
from annotate.store import open_store

COUNT = 60
MODEL = "claude-haiku-4-5"


def calibrated_export(store, tmp_path: Path, client=None, model: str = MODEL) -> tuple[Path, str]:
    """The YAML export of a version marked calibrated on `prepare_rubric_store`'s sample."""
    prepare_rubric_store(store, tmp_path, count=COUNT)
    save_thresholds(store, {"cohen_kappa": 0.3, "sensitivity": 0.3, "specificity": None}, "lena")
    version = edit_rubric(store, 1, {"model": model}, "lena", "for the check").version
    make_current(store, version, "lena")
    judge = run_judge(store, "loop", version, client=client, concurrency=4, actor="lena").judge
    marked = mark_calibrated(store, judge, "loop", actor="lena", repetitions=100)
    assert marked["id"] is not None, marked
    path = tmp_path / "rubric.yaml"
    path.write_text(export_yaml(store, version))
    return path, judge


def stored_verdicts(store, judge: str) -> dict[tuple[str, int], str]:
    rows = store.fetchall(
        "SELECT trace_id, claim_index, label FROM judge_verdicts WHERE judge = ?", [judge]
    )
    return {(t, int(i)): label for t, i, label in rows}


def prompts(requests: list[dict]) -> dict[str, dict]:
    """The judge's requests by their claim block: system and messages, as sent."""
    found = {}
    for request in requests:
        claim = request["messages"][0]["content"][-1]["text"]
        found[claim] = {k: request[k] for k in ("system", "messages", "output_config", "model")}
    return found


def test_the_export_gives_the_judges_verdicts_on_the_same_claims(
    fresh_store, tmp_path, fake_anthropic
):
    fake_anthropic.responder = answer
    path, judge = calibrated_export(fresh_store, tmp_path, fake_anthropic.client())
    judged = stored_verdicts(fresh_store, judge)
    judge_prompts = prompts(fake_anthropic.message_requests())
    fake_anthropic.requests.clear()
    with GroundingCheck.from_export(path, client=fake_anthropic.client()) as check:
        for i, row in enumerate(trace_rows(COUNT)):
            result = check.check(
                row["response"], row["context"], row["request"], id=row["trace_id"]
            )
            labels = [claim.verdict.label for claim in result.claims]
            assert labels == [judged[(row["trace_id"], n)] for n in range(2)]
            assert result.grounded_answer is (not is_wrong(i))
            assert [c.span.text for c in result.claims] == [c["text"] for c in row["claims"]]
    assert (
        prompts(fake_anthropic.message_requests()) == judge_prompts
    )  # the same calls, byte for byte
    assert result.model == MODEL and result.judge.startswith("check-v")
    card = result.as_json()["held_out"]
    assert card["status"] == "fresh" and card["sensitivity"]["value"] == 1.0
    assert card["specificity"]["units"] > 0 and card["level"] == "claim"


def test_an_unsupported_claim_is_reported_with_its_quote(export_path, fake_anthropic):
    fake_anthropic.responder = answer
    row = trace_rows(1)[0]  # trace 0 states $47 where the context says $40
    with GroundingCheck.from_export(
        export_path, client=fake_anthropic.client(), model=MODEL
    ) as check:
        line = check.check(row["response"], row["context"], id="t0").as_json()
    assert line["grounded_answer"] is False and line["fallback"] is False
    [unsupported] = line["unsupported_claims"]
    assert unsupported["quote"] == "The amount due is $47."
    assert row["response"][unsupported["start"] : unsupported["end"]] == unsupported["quote"]
    assert (unsupported["label"], unsupported["error_type"]) == ("contradicted", "number")
    # the card was made for the baseline: its numbers do not vouch for another model
    assert line["held_out"]["sensitivity"] is None
    assert line["held_out"]["status"] == "the card is for offline-baseline"


@pytest.fixture(scope="module")
def export_path(tmp_path_factory) -> Path:
    """A version calibrated with the offline baseline (no calls needed to make it), made once."""
    folder = tmp_path_factory.mktemp("baseline_export")
    store = open_store(folder / "annotate.duckdb")
    try:
        return calibrated_export(store, folder, model=BASELINE_MODEL)[0]
    finally:
        store.close()


def test_a_late_judge_gives_the_callers_fallback_never_true(export_path, fake_anthropic):
    row = trace_rows(2)[1]  # both claims supported: a finished judge would say true
    fake_anthropic.responder = answer
    fake_anthropic.latency = 1.0
    client = fake_anthropic.client()
    for fallback in (UNKNOWN, False):
        with GroundingCheck.from_export(
            export_path, client=client, model=MODEL, timeout=0.2, fallback=fallback
        ) as check:
            result = check.check(row["response"], row["context"])
        assert result.grounded_answer is fallback or result.grounded_answer == fallback
        assert result.fallback and "timed out after 0.2 s" in result.errors[0]
    with pytest.raises(UsageError, match="never|cannot say an answer is grounded"):
        GroundingCheck.from_export(export_path, client=client, model=MODEL, fallback=True)


def test_a_failed_call_leaves_the_answer_to_the_fallback_but_a_found_error_stands(
    export_path, fake_anthropic
):
    rows = trace_rows(2)
    fake_anthropic.responder = answer
    fake_anthropic.reply(200, message("I think so."), when="INV-1001 was issued")
    # One call at a time: both claims' requests hold "INV-1000 was issued" (in the context), so
    # the failing reply must meet the first claim's request, not whichever arrives first.
    with GroundingCheck.from_export(
        export_path, client=fake_anthropic.client(), model=MODEL, timeout=120, concurrency=1
    ) as check:
        open_ = check.check(rows[1]["response"], rows[1]["context"])
        fake_anthropic.reply(200, message("I think so."), when="INV-1000 was issued")
        found = check.check(rows[0]["response"], rows[0]["context"])
    assert (open_.grounded_answer, open_.fallback) == (UNKNOWN, True)
    assert "did not parse" in open_.errors[0]
    assert (found.grounded_answer, found.fallback) == (False, False)  # $47 is unsupported anyway


def test_the_offline_baseline_needs_no_key(export_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY.*--baseline"):
        GroundingCheck.from_export(export_path, model=MODEL)
    row = trace_rows(1)[0]
    result = GroundingCheck.from_export(export_path, baseline=True).check(
        row["response"], row["context"]
    )
    assert result.grounded_answer is False and result.model == BASELINE_MODEL
    assert result.held_out["status"] == "fresh"  # the card was made for the baseline


def test_bad_input_names_its_field(export_path):
    check = GroundingCheck.from_export(export_path, baseline=True)
    for response, context, field in [
        (None, "ctx", "response"),
        ("An answer.", "", "context"),
        ("An answer.", [{"source": "kb"}], "context[0]"),
        ("An answer.", 42, "context"),
    ]:
        with pytest.raises(CheckInputError) as caught:
            check.check(response, context)
        assert caught.value.field == field
    with pytest.raises(CheckInputError, match="'claims'"):
        check.check("An answer.", "ctx", claims="An answer.")


def test_an_edited_or_uncalibrated_export_is_refused(export_path, tmp_path):
    edited = tmp_path / "edited.yaml"
    edited.write_text(export_path.read_text().replace("Numbers, dates", "Numbers, places"))
    with pytest.raises(InputError, match="content_hash.*edited after export"):
        GroundingCheck.from_export(edited, baseline=True)
    document = export_path.read_text()
    uncalibrated = tmp_path / "uncalibrated.yaml"
    uncalibrated.write_text(document[: document.index("calibrated:")])
    with pytest.raises(InputError, match="never marked calibrated"):
        GroundingCheck.from_export(uncalibrated, baseline=True)
    allowed = GroundingCheck.from_export(uncalibrated, baseline=True, require_calibrated=False)
    assert (
        allowed.held_out["sensitivity"] is None and allowed.held_out["status"] == "not calibrated"
    )


def test_the_cli_writes_one_line_per_input_and_names_bad_lines(export_path, cli, tmp_path):
    rows = trace_rows(3)
    lines = [json.dumps({k: r[k] for k in ("trace_id", "context", "response")}) for r in rows]
    lines.insert(1, "{not json")
    lines.insert(3, json.dumps({"id": "x", "response": "No context here."}))
    source = tmp_path / "answers.jsonl"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "checked.jsonl"
    done = cli("check", str(source), "--rubric", str(export_path), "--baseline", "--out", str(out))
    assert done.code == 1, done.err
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [w["line"] for w in written] == [1, 2, 3, 4, 5]
    assert written[1]["error"].startswith("line 2: not JSON")
    assert (written[3]["field"], written[3]["id"]) == ("context", "x")
    assert [w["grounded_answer"] for w in (written[0], written[2], written[4])] == [
        False,
        True,
        True,
    ]
    assert "3 answers" in done.err and "2 lines rejected" in done.err
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(
        '{"context": "Café", "response": "Café"}\n'.encode("latin-1") + source.read_bytes()
    )
    again = cli("check", str(latin), "--rubric", str(export_path), "--baseline")
    shown = [json.loads(line) for line in again.out.splitlines()]
    assert shown[0]["error"].startswith("line 1: not UTF-8") and len(shown) == 6
    missing = cli("check", str(source), "--rubric", str(tmp_path / "nowhere.yaml"))
    assert missing.code == 2 and "not a readable YAML rubric" in missing.err


def test_the_cli_checks_offline_with_the_stores_rubric_and_needs_a_rubric_otherwise(
    fresh_store, cli, tmp_path
):
    fresh_store.close()  # the store holds the default rubric, version 1
    row = trace_rows(1)[0]
    source = tmp_path / "answers.jsonl"
    source.write_text(json.dumps({"context": row["context"], "response": row["response"]}) + "\n")
    done = cli("check", str(source), "--baseline")
    assert done.code == 0, done.err
    [line] = [json.loads(text) for text in done.out.splitlines()]
    assert (line["grounded_answer"], line["rubric"]["version"]) == (False, 1)
    assert line["held_out"]["status"] == "not calibrated"
    refused = cli("check", str(source))
    assert refused.code == 2 and "--rubric FILE.yaml" in refused.err


def question_form(export_path: Path) -> RubricExport:
    """The export's rubric in the QAG form (yes / no / unknown), its hash made anew."""
    document = read_document(export_path)
    document["rubric"]["granularity"] = "question"
    document["content_hash"] = content_hash(document["rubric"])
    return export_of(document, "question form")


def test_the_question_form_maps_yes_and_no_and_an_unknown_leaves_the_answer_open(
    export_path, fake_anthropic
):
    row = trace_rows(1)[0]
    offline = GroundingCheck(question_form(export_path), baseline=True).check(
        row["response"], row["context"]
    )
    assert [c.verdict.label for c in offline.claims] == ["yes", "no"]
    assert offline.grounded_answer is False
    said = {"reasoning": "", "answer": "unknown", "error_type": "none", "evidence": ""}
    fake_anthropic.responder = lambda request: Reply(200, message(json.dumps(said)))
    with GroundingCheck(
        question_form(export_path), client=fake_anthropic.client(), model=MODEL
    ) as check:
        open_ = check.check(row["response"], row["context"])
    assert (open_.grounded_answer, open_.fallback, open_.errors) == (UNKNOWN, False, [])
    assert fake_anthropic.message_requests()[0]["output_config"]["format"]["schema"]["properties"][
        "answer"
    ]["enum"] == ["yes", "no", "unknown"]
