"""The `annotate agreement`, `calibration`, `report` and `judge-labels` commands: parsing, printing."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from annotate.agreement.calibration import (
    DEFAULT_THRESHOLDS,
    JUDGE_STATISTICS,
    calibration,
    load_thresholds,
    save_thresholds,
)
from annotate.agreement.reliability import (
    LEVELS,
    PAIR_STATS,
    SCALES,
    STATISTICS,
    agreement,
    save_min_shared,
)
from annotate.cli.console import RESAMPLES, SEED, out_dir, shown
from annotate.cli.ratings import add_criterion, run_rating_agreement, run_rating_calibration
from annotate.errors import UsageError, counted
from annotate.judge.labels import mapping_rows, parse_assignment, set_label
from annotate.judge.rubrics.card import judge_calibration, rubric_judge
from annotate.store.assignments import judge_names


def add_agreement_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser("agreement", help="agreement between reviewers")
    _scope(command)
    command.add_argument(
        "--scale", choices=SCALES, default="binary", help="binary outcomes or every rubric label"
    )
    command.add_argument(
        "--min-shared-units",
        type=int,
        help="flag a reviewer only with at least this many shared units (saved; default 20)",
    )
    add_criterion(command)
    common(command)
    command.set_defaults(run=lambda args: run_agreement(args, writer, emit))

    judge = commands.add_parser("calibration", help="the judge against the reviewers' gold")
    _judge_arguments(judge)
    add_criterion(judge)
    common(judge)
    judge.set_defaults(run=lambda args: run_calibration(args, writer, emit))

    report = commands.add_parser(
        "report", help="write the calibration report: report.html (offline), report.md, report.json"
    )
    _judge_arguments(report)
    report.add_argument(
        "--out", required=True, type=out_dir, help="directory to write the three files into"
    )
    common(report, json_flag=False)
    report.set_defaults(run=lambda args: run_report(args, writer, say))
    _add_judge_labels(commands, common, writer, emit, say)


def _add_judge_labels(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser(
        "judge-labels",
        help="list each judge's labels and their mapping; --set LABEL=supported|unsupported|abstained",
    )
    command.add_argument("--judge", help="one judge (needed with --set when there are several)")
    command.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="LABEL=OUTCOME",
        help="map a label the judge used to supported, unsupported or abstained (repeatable)",
    )
    common(command)
    command.set_defaults(run=lambda args: run_judge_labels(args, writer, emit, say))


def _scope(command: argparse.ArgumentParser) -> None:
    command.add_argument("--sample", help="one sample's traces (default: every labelled trace)")
    command.add_argument(
        "--level",
        choices=LEVELS,
        default="claim",
        help="claims or whole responses (default: claim)",
    )
    command.add_argument("--seed", type=SEED, default=0, help="bootstrap seed")
    command.add_argument("--resamples", type=RESAMPLES, default=1000, help="bootstrap resamples")


def _judge_arguments(command: argparse.ArgumentParser) -> None:
    _scope(command)
    command.add_argument(
        "--judge", required=True, help="the judge's name (annotate judge-labels lists them)"
    )
    command.add_argument(
        "--by", default="", help="slice by: feature, risk_category, model, error_type, attributes"
    )
    command.add_argument("--epsilon", type=float, default=0.15, help="alt-test epsilon")
    command.add_argument(
        "--part",
        choices=("held_out", "tuning", "all"),
        default="held_out",
        help="our judges (rubric-vN:model) with --sample: the part of the split scored",
    )
    for name in DEFAULT_THRESHOLDS:
        flag = "--min-" + name.replace("_", "-").replace("cohen-", "")
        command.add_argument(
            flag,
            dest=f"min_{name}",
            type=float,
            help=f"readiness: lower bound of {name} must reach this (saved for next time)",
        )


def _line(name: str, stat: dict[str, Any]) -> str:
    if stat.get("value") is None:
        return f"{name}: undefined ({stat.get('reason')})"
    interval = f" [{stat['low']:.3f}, {stat['high']:.3f}]" if stat.get("low") is not None else ""
    how = f"; {stat['method']}" if interval and stat.get("method") else ""
    note = f"; no interval: {stat['reason']}" if stat.get("reason") else ""
    return f"{name}: {stat['value']:.3f}{interval} (n={stat['units']}{how}{note})"


def run_agreement(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    if args.criterion:
        return run_rating_agreement(args, writer, emit)
    with writer(args) as store:
        if args.min_shared_units is not None:
            save_min_shared(store, args.min_shared_units, args.actor)
        result = agreement(store, args.sample, args.level, args.scale, args.seed, args.resamples)
    if args.json:
        emit(result)
        return 0
    scope = args.sample or "all labelled traces"
    print(f"{scope}: {result['units']} {args.level}s with 2+ reviewers ({result['scale']} scale)")
    for name in STATISTICS:
        print("  " + _line(name, result[name]))
    for name in PAIR_STATS:
        for pair in result[name]:
            print("  " + _line(f"{name} {pair['a']}/{pair['b']}", pair))
    if result["prevalence"]["note"]:
        print("  note: " + result["prevalence"]["note"])
    for row in result["per_reviewer"]:
        for flag in row["flags"]:
            print(f"  flagged {row['reviewer']}: {flag}")
        if row["note"]:
            print(f"  {row['reviewer']}: {row['note']}")
    return 0


def _thresholds(args: argparse.Namespace, store: Any) -> dict[str, float | None]:
    given = {n: getattr(args, f"min_{n}") for n in DEFAULT_THRESHOLDS}
    given = {n: v for n, v in given.items() if v is not None}
    if given:
        save_thresholds(store, {**load_thresholds(store), **given}, args.actor)
    return load_thresholds(store)


def _calibration(args: argparse.Namespace, store: Any) -> dict[str, Any]:
    by = [part.strip() for part in args.by.split(",") if part.strip()]
    thresholds = _thresholds(args, store)
    if rubric_judge(args.judge) and args.sample and args.level == "claim":
        part = None if args.part == "all" else args.part
        return judge_calibration(
            store, args.judge, args.sample, part, by, args.seed, args.resamples, thresholds,
            args.epsilon,
        )  # fmt: skip
    return calibration(
        store, args.judge, args.sample, args.level, by, args.seed, args.resamples,
        thresholds, args.epsilon,
    )  # fmt: skip


def run_calibration(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    if args.criterion:
        return run_rating_calibration(args, writer, emit)
    with writer(args) as store:
        result = _calibration(args, store)
    if args.json:
        emit(result)
        return 0
    print(
        f"{args.judge} ({args.level} level): {counted(result['n'], 'unit')} with gold; {result['confusion']}"
    )
    for name in JUDGE_STATISTICS:
        print("  " + _line(name, result[name]))
    cover = result["coverage"]
    print(
        f"  coverage: the judge abstained on {cover['abstained']} of {cover['units']} units "
        f"with gold ({_line('share', cover['abstained_share'])})"
    )
    print("  " + result["readiness"]["verdict"])
    alt = result["alt_test"]
    print("  alt-test: " + (alt.get("verdict") or alt.get("reason") or ""))
    for entry in result["slices"]:
        where = shown(", ".join(f"{k}={v}" for k, v in entry["slice"].items()))
        if entry.get("reason"):
            print(f"  [{where}] {entry['reason']}")
        else:
            print(f"  [{where}] " + _line("kappa", entry["cohen_kappa"]))
    return 0


def run_report(args: argparse.Namespace, writer: Any, say: Any) -> int:
    from annotate.labelling.evidence import shared_evidence
    from annotate.report.document import build_report, write_report
    from annotate.report.render import warm_up
    from annotate.stats.resamples import shared_resamples

    warm_up()  # the chart engine starts while the numbers are computed
    # One read of the evidence and one set of resamples for calibration and agreement.
    with writer(args) as store, shared_resamples(), shared_evidence():
        document = build_report(
            store, _calibration(args, store), args.seed, args.resamples, args.actor
        )
    for path in write_report(document, Path(args.out)):
        say(f"wrote {path}")
    return 0


def _judge_for_set(args: argparse.Namespace, store: Any) -> str:
    if args.judge:
        return str(args.judge)
    judges = judge_names(store)
    if len(judges) != 1:
        known = ", ".join(judges) or "none"
        raise UsageError(f"--set needs --judge NAME when the store has judges {known}")
    return judges[0]


def run_judge_labels(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        if args.set:
            judge = _judge_for_set(args, store)
            pairs = [parse_assignment(text) for text in args.set]
            with store.transaction():  # every --set, or none: a bad one keeps none before it
                for label, outcome in pairs:
                    set_label(store, judge, label, outcome, args.actor)
            for label, outcome in pairs:
                say(f"{judge}: {label!r} -> {outcome}")
        rows = mapping_rows(store, args.judge)
    if args.json:
        emit({"labels": [{**r, "source": r["source"]} for r in rows]})
        return 0
    for row in rows:
        outcome = row["outcome"] or "UNMAPPED"
        print(
            f"{row['judge']}\t{row['label']!r}\t{counted(row['verdicts'], 'verdict')}\t{outcome}\t{row['source']}"
        )
    unmapped = [r for r in rows if r["outcome"] is None]
    if unmapped:
        say(
            f"{counted(len(unmapped), 'label')} without a mapping: calibration stops until each is mapped, "
            "e.g. annotate judge-labels --judge NAME --set LABEL=abstained"
        )
    return 0
