"""The `annotate agreement` and `annotate calibration` commands (claim level): parsing and printing."""

from __future__ import annotations

import argparse
from typing import Any

from annotate.calibration import agreement, calibration


def add_agreement_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser(
        "agreement", help="agreement between reviewers on a sample's claims"
    )
    command.add_argument("--sample", required=True)
    command.add_argument("--scale", choices=("binary", "full"), default="binary")
    command.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    common(command)
    command.set_defaults(run=lambda args: run_agreement(args, writer, emit))

    judge = commands.add_parser(
        "calibration", help="the judge against human gold on a sample's claims"
    )
    judge.add_argument("--sample", required=True)
    judge.add_argument("--judge", required=True)
    judge.add_argument("--by", default="", help="slice columns or attributes, comma-separated")
    judge.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    common(judge)
    judge.set_defaults(run=lambda args: run_calibration(args, writer, emit))


def _line(name: str, stat: dict[str, Any]) -> str:
    if stat.get("value") is None:
        return f"{name}: undefined ({stat.get('reason')})"
    interval = f" [{stat['low']:.3f}, {stat['high']:.3f}]" if stat.get("low") is not None else ""
    return f"{name}: {stat['value']:.3f}{interval} (n={stat['units']})"


def run_agreement(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        result = agreement(store, args.sample, args.scale, args.seed)
    if args.json:
        emit(result)
        return 0
    print(f"{args.sample}: {result['units']} claims with 2+ reviewers ({result['scale']} scale)")
    for name in ("percent_agreement", "krippendorff_alpha", "fleiss_kappa", "gwet_ac1"):
        print("  " + _line(name, result[name]))
    for pair in result["cohen_kappa"]:
        print("  " + _line(f"cohen_kappa {pair['a']}/{pair['b']}", pair))
    return 0


def run_calibration(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    by = [part.strip() for part in args.by.split(",") if part.strip()]
    with writer(args) as store:
        result = calibration(store, args.sample, args.judge, by, args.seed)
    if args.json:
        emit(result)
        return 0
    print(f"{args.judge} on {args.sample}: {result['n']} claims with gold; {result['confusion']}")
    for name in (
        "sensitivity",
        "specificity",
        "precision",
        "accuracy",
        "balanced_accuracy",
        "cohen_kappa",
    ):
        print("  " + _line(name, result[name]))
    return 0
