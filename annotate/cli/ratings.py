"""`--criterion NAME` of `annotate agreement`, `calibration` and `rates`: ratings of whole
responses on a rubric's ordinal criterion (relevance, coherence, ...). Parsing and printing only."""

from __future__ import annotations

import argparse
from typing import Any

from annotate.errors import slice_label
from annotate.ratings.agreement import reviewer_agreement
from annotate.ratings.calibration import rating_calibration
from annotate.ratings.estimates import DEFAULT_AT_OR_BELOW, SLICES, rating_estimates

CRITERION_HELP = (
    "a response-level criterion of the rubric (relevance, coherence, ...) instead of claims"
)


def add_criterion(command: argparse.ArgumentParser, rates: bool = False) -> None:
    command.add_argument("--criterion", help=CRITERION_HELP)
    if rates:
        command.add_argument(
            "--at-or-below",
            type=float,
            default=DEFAULT_AT_OR_BELOW,
            help="with --criterion: the share of responses rated at or below this (default 2)",
        )


def _line(name: str, stat: dict[str, Any]) -> str:
    if stat.get("value") is None:
        return f"{name}: undefined ({stat.get('reason')})"
    interval = f" [{stat['low']:.3f}, {stat['high']:.3f}]" if stat.get("low") is not None else ""
    note = f"; no interval: {stat['reason']}" if stat.get("reason") else ""
    how = f"; {stat['method']}" if interval and stat.get("method") else ""
    return f"{name}: {stat['value']:.3f}{interval} (n={stat['units']}{how}{note})"


def run_rating_agreement(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        found = reviewer_agreement(store, args.criterion, args.sample, args.seed, args.resamples)
    if args.json:
        emit(found)
        return 0
    scope = args.sample or "all rated traces"
    print(f"{scope}, {args.criterion}: {found['units']} responses with 2+ reviewers")
    for name in ("krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "icc_2_1"):
        print("  " + _line(name, found[name]))
    for pair in found["weighted_kappa_quadratic"]:
        print("  " + _line(f"weighted_kappa_quadratic {pair['a']}/{pair['b']}", pair))
    return 0


def run_rating_calibration(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        found = rating_calibration(
            store, args.judge, args.criterion, args.sample, args.seed, args.resamples
        )
    if args.json:
        emit(found)
        return 0
    print(
        f"{args.judge}, {args.criterion}: {found['units']} responses rated by the judge and a "
        f"reviewer (the judge rated {found['judged_units']})"
    )
    for name in (
        "weighted_kappa_quadratic",
        "mean_bias",
        "mean_absolute_difference",
        "spearman_rho",
    ):
        print("  " + _line(name, found[name]))
    print("  " + found["readiness"]["verdict"])
    return 0


def run_rating_rates(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        found = rating_estimates(
            store, args.criterion, args.sample, args.judge, args.at_or_below, args.seed,
            args.resamples,
        )  # fmt: skip
    if args.json:
        emit(found)
        return 0
    print(f"{args.criterion} ({found['source']}): {found['method']}")
    print(
        f"{'slice':30} {'n':>5} {'mean':>6} {'95% interval':>16} {'<=' + str(args.at_or_below):>7}"
    )
    rows = [("overall", found["overall"])]
    rows += [(slice_label({n: k}), v) for n in SLICES for k, v in found[n].items()]
    for label, entry in rows:
        mean, share = entry["mean"], entry["share_at_or_below"]
        value = "-" if mean["value"] is None else f"{mean['value']:.2f}"
        span = "" if mean["low"] is None else f"[{mean['low']:.2f}, {mean['high']:.2f}]"
        below = "-" if share["value"] is None else f"{share['value']:.1%}"
        print(f"{label[:30]:30} {mean['units']:>5} {value:>6} {span:>16} {below:>7}")
    return 0


def add_ratings_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser(
        "judge-ratings",
        help="our judge rates the sample's responses on the rubric's criteria (one call each)",
    )
    command.add_argument("--sample", required=True, help="the sample whose responses are rated")
    command.add_argument(
        "--version", type=int, help="the rubric version (default: the current one)"
    )
    common(command)
    command.set_defaults(run=lambda args: run_judge_ratings(args, writer, emit))


def run_judge_ratings(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    from annotate.judge.rubrics.rating_judge import rate_responses

    with writer(args) as store:
        found = rate_responses(store, args.sample, args.version, args.actor)
    if args.json:
        emit(found)
        return 0
    print(
        f"{found['judge']}: rated {found['rated']} responses of {found['sample']}, "
        f"{found['failed']} calls failed (recorded), {found['skipped']} rated before"
    )
    return 1 if found["failed"] else 0
