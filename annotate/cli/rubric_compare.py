"""`annotate rubric compare A B --sample NAME`: parsing and printing only; the numbers come from
annotate.judge.rubrics.compare (the Rubric page calls the same function).

Exit codes, for CI: 0 when B is not worse than A by more than --margin on any paired
difference's lower bound, 1 when it is, 2 usage errors.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from annotate.cli.console import shown
from annotate.errors import counted, slice_label
from annotate.judge.rubrics.compare import (
    COMPARE_PARTS,
    DEFAULT_MARGIN,
    PAIRED_STATISTICS,
    compare_versions,
    comparison_rows,
    judge_of,
)
from annotate.judge.rubrics.split import HELD_OUT

EXIT_WORSE = 1


def add_compare_command(action: Any, common: Any, writer: Any, emit: Any) -> None:
    compare = action("compare")
    compare.add_argument("a", help="version A: a rubric version number or a judge's name")
    compare.add_argument("b", help="version B, compared with A on the same claims")
    compare.add_argument(
        "--sample", required=True, help="the sample whose claims both versions judged"
    )
    compare.add_argument("--part", choices=COMPARE_PARTS, default=HELD_OUT,
                         help="claims of the split to compare on (default: held_out)")  # fmt: skip
    compare.add_argument("--by", default="", help="slices, comma-separated (e.g. feature)")
    compare.add_argument(
        "--margin", type=float, default=DEFAULT_MARGIN,
        help=f"exit 1 when a difference's lower bound is below -MARGIN (default {DEFAULT_MARGIN})",
    )  # fmt: skip
    common(compare)
    compare.set_defaults(run=lambda args: run_compare(args, writer, emit))


def run_compare(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    by = [part.strip() for part in args.by.split(",") if part.strip()]
    with writer(args) as store:
        first, second = judge_of(store, args.a), judge_of(store, args.b)
        document = compare_versions(store, first, second, args.sample, args.part, by, args.margin)
    if args.json:
        emit(document)
    else:
        print("\n".join(comparison_text(document)))
    return 0 if document["gate"]["passed"] else EXIT_WORSE


def _number(value: Any, signed: bool = False) -> str:
    return "—" if value is None else f"{value:+.3f}" if signed else f"{value:.3f}"


def _interval(low: Any, high: Any, signed: bool = False) -> str:
    if low is None:
        return ""
    return f"[{_number(low, signed)}, {_number(high, signed)}]"


def comparison_text(document: Mapping[str, Any]) -> list[str]:
    lines = [
        f"A {shown(document['a'])} vs B {shown(document['b'])} on {shown(document['sample'])} "
        f"({document['part']}): {counted(document['claims'], 'claim')} with gold, judged by both",
        f"{'statistic':<13} {'A':<22} {'B':<22} B - A (paired)",
    ]
    for row in comparison_rows(document):
        a = f"{_number(row['a'])} {_interval(row['a_low'], row['a_high'])}"
        b = f"{_number(row['b'])} {_interval(row['b_low'], row['b_high'])}"
        diff = _interval(row["low"], row["high"], True) or row["note"]
        lines.append(
            f"{row['statistic']:<13} {a:<22} {b:<22} {_number(row['difference'], True)} {diff}"
        )
    lines += _mcnemar(document["difference"]["mcnemar"])
    lines += _slices(document["slices"])
    lines += _flips(document["flips"])
    lines.append(_gate(document["gate"]))
    return lines


def _mcnemar(test: Mapping[str, Any]) -> list[str]:
    return [
        f"McNemar (exact, {counted(test['discordant'], 'discordant claim')}): "
        f"{test['right_to_wrong']:,} right to wrong, {test['wrong_to_right']:,} wrong to right, "
        f"p = {test['p']:.4g}"
    ]


def _slices(slices: list[Mapping[str, Any]]) -> list[str]:
    lines = []
    for entry in slices:
        where = f"  {shown(slice_label(entry['slice']))} ({counted(entry['n'], 'claim')}):"
        if entry.get("reason"):
            lines.append(f"{where} {entry['reason']}")
            continue
        parts = [
            f"{name} {_number(entry[name]['value'], True)} "
            f"{_interval(entry[name]['low'], entry[name]['high'], True) or entry[name].get('reason', '')}"
            for name in PAIRED_STATISTICS
        ]
        lines.append(f"{where} " + "; ".join(parts) + f"; McNemar p = {entry['mcnemar']['p']:.4g}")
    return ["slices (B - A, paired):", *lines] if lines else []


def _flips(flips: list[Mapping[str, Any]]) -> list[str]:
    lines = [f"flips: {counted(len(flips), 'claim')}"]
    for flip in flips:
        lines.append(
            f"  {flip['flip']}: {shown(flip['trace_id'])} claim {flip['claim_index']} "
            f"(gold {flip['gold']}; A {flip['a']}, B {flip['b']}): {shown(flip['claim'])}"
        )
    return lines


def _gate(gate: Mapping[str, Any]) -> str:
    unchecked = (
        f" (no interval, not checked: {', '.join(gate['unchecked'])})" if gate["unchecked"] else ""
    )
    if gate["passed"]:
        return f"pass: B is not worse than A by more than {gate['margin']} on any lower bound{unchecked}"
    return (
        f"fail: B may be worse than A by more than {gate['margin']} on "
        f"{', '.join(gate['worse'])} (lower bound below -{gate['margin']}){unchecked}"
    )
