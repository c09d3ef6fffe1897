"""The `annotate judge` and `annotate rubric list | show | export | import | current | calibrate
| propose` commands: parsing and printing; the work is in annotate.judge.rubrics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from annotate.cli.console import out_file, shown
from annotate.errors import UsageError, counted, slice_label
from annotate.judge.rubrics.card import build_card, card_status
from annotate.judge.rubrics.exchange import export_markdown, export_yaml, import_rubric
from annotate.judge.rubrics.loop import calibrated_marks, mark_calibrated, not_ready_reason
from annotate.judge.rubrics.render import card_markdown
from annotate.judge.rubrics.runner import estimate_text, nothing_to_judge, run_judge
from annotate.judge.rubrics.versions import (
    BASELINE_MODEL,
    current_version,
    get_rubric,
    list_rubrics,
    make_current,
)
from annotate.spend.pricing import spend_text

EXIT_FAILED_CALLS = 1
EXIT_NOT_READY = 1  # an outcome, like a failed gate: the card is printed, nothing is marked
# The `rubric` subcommands and their help: the group's help lists these names, and a
# subcommand is registered only through this table (the test checks each name is registered).
RUBRIC_ACTIONS = {
    "list": "every version",
    "show": "one version, its calibration marks and whether they are stale",
    "export": "YAML (default) or Markdown with the calibration card",
    "import": "a YAML rubric: the same content is the same version",
    "current": "make VERSION the one `annotate judge` uses",
    "calibrate": "print the calibration card; mark the version calibrated where it is ready",
    "propose": "draft a new version from the judge's disagreements on the tuning part "
    "(one LLM call)",
    "compare": "version A against version B on the same claims: paired differences, McNemar, "
    "the flips; exit 1 when B is worse by more than --margin",
}


def add_rubric_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    judge = commands.add_parser(
        "judge", help="run a rubric version as the judge on a sample's labelled claims"
    )
    judge.add_argument("--sample", required=True, help="the sample whose claims are judged")
    judge.add_argument("--rubric", type=int, help="rubric version (default: the current one)")
    judge.add_argument("--model", help="another model id for this run (a separate judge)")
    judge.add_argument(
        "--baseline",
        action="store_true",
        help=f"the offline baseline judge ({BASELINE_MODEL}); no key",
    )
    judge.add_argument(
        "--batch", action="store_true", help="Message Batches: half price, results within 24 h"
    )
    judge.add_argument("--concurrency", type=int, default=8, help="calls in flight at once")
    judge.add_argument(
        "--all-claims",
        action="store_true",
        help="every claim of the sample, not only labelled ones",
    )
    judge.add_argument("--dry-run", action="store_true", help="plan and cost estimate; no call")
    judge.add_argument("--poll-seconds", type=float, default=30.0, help="batch polling interval")
    common(judge)
    judge.set_defaults(run=lambda args: run_judge_command(args, writer, emit, say))

    summary = "rubric versions: " + ", ".join(RUBRIC_ACTIONS)
    rubric = commands.add_parser("rubric", help=summary, description=summary)
    actions = rubric.add_subparsers(dest="action", required=True)

    def action(name: str) -> Any:
        return actions.add_parser(name, help=RUBRIC_ACTIONS[name])

    listing = action("list")
    common(listing)
    listing.set_defaults(run=lambda args: run_list(args, writer, emit))
    show = action("show")
    show.add_argument("version", type=int, help="the rubric version")
    common(show)
    show.set_defaults(run=lambda args: run_show(args, writer, emit))
    export = action("export")
    export.add_argument("version", type=int, help="the rubric version")
    export.add_argument(
        "--format",
        choices=("yaml", "markdown"),
        default="yaml",
        help="YAML for machines, Markdown for people (default: yaml)",
    )
    export.add_argument("--out", type=out_file, help="file to write (default: stdout)")
    common(export, json_flag=False)
    export.set_defaults(run=lambda args: run_export(args, writer, say))
    imported = action("import")
    imported.add_argument("file", help="a rubric YAML file (as rubric export writes)")
    common(imported)
    imported.set_defaults(run=lambda args: run_import(args, writer, emit))
    current = action("current")
    current.add_argument("version", type=int, help="the rubric version")
    common(current)
    current.set_defaults(run=lambda args: run_current(args, writer, emit))
    mark = action("calibrate")
    mark.add_argument("version", type=int, help="the rubric version")
    mark.add_argument("--sample", required=True, help="the sample the card is made on")
    mark.add_argument("--model", help="the model of the run (default: the version's)")
    mark.add_argument("--by", default="feature", help="slices (default: feature)")
    common(mark)
    mark.set_defaults(run=lambda args: run_calibrate(args, writer, emit, say))
    propose = action("propose")
    propose.add_argument("version", type=int, help="the rubric version")
    propose.add_argument("--sample", required=True, help="the sample whose disagreements it reads")
    propose.add_argument("--model", help="the model of the judged run (default: the version's)")
    common(propose)
    propose.set_defaults(run=lambda args: run_propose(args, writer, emit))
    from annotate.cli.rubric_compare import add_compare_command

    add_compare_command(action, common, writer, emit)


def run_judge_command(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    def progress(done: int, total: int) -> None:
        if not args.json and total:
            print(f"\r{done:,}/{total:,} calls", end="", file=sys.stderr, flush=True)

    model = BASELINE_MODEL if args.baseline else args.model
    with writer(args) as store:
        report = run_judge(
            store, args.sample, args.rubric, model=model, concurrency=args.concurrency,
            batch=args.batch, dry_run=args.dry_run, labelled_only=not args.all_claims,
            progress=progress, poll_seconds=args.poll_seconds, actor=args.actor,
        )  # fmt: skip
    hint = nothing_to_judge(report, labelled_only=not args.all_claims)
    if args.json:
        emit(report.as_json())
        if hint:  # stdout holds the document alone
            say(hint)
    elif hint:  # a report of zeros would only hide the reason
        print(hint)
    else:
        print(file=sys.stderr)  # ends the progress line
        _print_report(report)
    missing = report.failed or (report.status == "submitted" and report.to_judge)
    return EXIT_FAILED_CALLS if missing and not report.dry_run else 0


def _print_report(report: Any) -> None:
    print(
        f"{report.judge} on {report.sample} ({report.mode}): {counted(report.claims, 'claim')}, "
        f"{report.already_done:,} already judged, {report.few_shot_excluded:,} few-shot (never "
        f"scored), {report.to_judge:,} to judge in {counted(report.calls, 'call')}"
    )
    print(f"  estimate: {estimate_text(report.estimate)}")
    if report.resumes:
        print(f"  resumes the last run: {report.resumes['outcome']}")
    if report.dry_run:
        print("  dry run: nothing was called")
        return
    print(f"  {report.status}: {counted(report.judged, 'verdict')}, {report.failed:,} failed")
    if report.spend is not None:
        print(f"  spend: {spend_text(report.spend)}")
    for failure in report.failures:
        print(f"  failed {failure['trace_id']} claim {failure['claim_index']}: {failure['error']}")
    if report.failures:
        print("  rerun the same command to retry only these")


def run_list(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        current = current_version(store)
        rows = [
            {"version": r.version, "name": r.name, "model": r.model, "granularity": r.granularity,
             "parent": r.parent, "note": r.note, "created_by": r.created_by,
             "created_at": str(r.created_at), "current": r.version == current,
             "few_shot": len(r.few_shot), "calibrated": bool(calibrated_marks(store, r.version))}
            for r in list_rubrics(store)
        ]  # fmt: skip
    if args.json:
        emit({"rubrics": rows})
        return 0
    for row in rows:
        mark = "*" if row["current"] else " "
        print(f"{mark} v{row['version']}\t{row['model']}\t{row['granularity']}\tparent {row['parent']}"
              f"\t{row['created_by']}\t{'calibrated' if row['calibrated'] else ''}")  # fmt: skip
    return 0


def run_show(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        rubric = get_rubric(store, args.version)
        marks = [
            {**m, "status": card_status(store, m["card"])}
            for m in calibrated_marks(store, args.version)
        ]
        current = current_version(store)
    if args.json:
        emit({"version": rubric.version, "current": rubric.version == current,
              "content_hash": rubric.content_hash, "rubric": rubric.content(),
              "calibrations": marks})  # fmt: skip
        return 0
    print(f"rubric v{rubric.version} ({'current' if rubric.version == current else 'not current'})"
          f": model {rubric.model}, granularity {rubric.granularity}, parent {rubric.parent}")  # fmt: skip
    print(rubric.instructions)
    if not marks:
        print("not marked calibrated")
    for mark in marks:
        print("\n".join(card_markdown(mark["card"], mark["status"])))
        print(f"card: {mark['status']['status']}")
    return 0


def run_export(args: argparse.Namespace, writer: Any, say: Any) -> int:
    with writer(args) as store:
        text = (
            export_yaml(store, args.version)
            if args.format == "yaml"
            else export_markdown(store, args.version)
        )
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        say(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def run_import(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    with writer(args) as store:
        rubric = import_rubric(store, path, args.actor)
    if args.json:
        emit({"version": rubric.version, "content_hash": rubric.content_hash})
    else:
        print(f"rubric v{rubric.version} ({rubric.content_hash[:16]})")
    return 0


def run_current(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        make_current(store, args.version, args.actor)
    if args.json:
        emit({"current": args.version})
    else:
        print(f"rubric v{args.version} is current")
    return 0


def run_calibrate(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    by = [part.strip() for part in args.by.split(",") if part.strip()]
    with writer(args) as store:
        judge = get_rubric(store, args.version).judge_name(args.model)
        result = mark_calibrated(store, judge, args.sample, by, args.actor)
        status = card_status(store, result["card"])
    if args.json:
        emit({**result, "status": status})
    else:
        print("\n".join(card_markdown(result["card"], status)))
    reason = not_ready_reason(result)
    if reason:
        say(reason)
        return EXIT_NOT_READY
    names = "; ".join(slice_label(s) for s in result["slices"])
    marked = f"marked rubric v{args.version} calibrated for {names}"
    (say if args.json else print)(marked)  # with --json stdout holds the document alone
    return 0


def run_propose(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    from annotate.judge.rubrics.revise import propose

    with writer(args) as store:
        judge = get_rubric(store, args.version).judge_name(args.model)
        proposal = propose(store, judge, args.sample, actor=args.actor)
    if args.json:
        emit(proposal.as_json())
        return 0
    draft = proposal.draft
    print(f"draft rubric v{draft.version} (parent v{draft.parent}): {shown(draft.note)}")
    print(f"rationale: {shown(proposal.rationale)}")
    print("\n".join(shown(line) for line in proposal.diff()) or "no change to the parent")
    print(f"spend: {spend_text(proposal.spend)}")
    return 0


__all__ = ["add_rubric_commands", "build_card"]
