"""The `annotate canary make|import|score` commands: parsing and printing only; the work is in
annotate.canary.

Exit codes: 0 done (every response imported), 1 some responses rejected, 2 usage errors
(unknown sample or suite, a bad rule, a name taken).
"""

from __future__ import annotations

import argparse
from typing import Any

from annotate.canary.scoring import import_responses, score
from annotate.canary.suite import make_suite, write_suite
from annotate.cli.console import SEED, out_file
from annotate.cli.imports import _finish_import
from annotate.errors import counted
from annotate.ingest import FORMATS


def add_canary_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    canary = commands.add_parser(
        "canary", help="canary-trap suites: contexts with fictive values, replayed and scored"
    )
    actions = canary.add_subparsers(dest="canary_command", required=True)
    make = actions.add_parser("make", help="make a suite from a sample's traces and export it")
    make.add_argument("--sample", required=True, help="the sample whose contexts are copied")
    make.add_argument("--name", required=True, help="the suite's name")
    make.add_argument(
        "--rule", default="halve", help="halve (default), scale:F or shift:D for numbers"
    )
    make.add_argument(
        "--swap-names", action="store_true", help="replace listed names by fictive ones"
    )
    make.add_argument("--seed", type=SEED, default=0, help="the same seed gives the same suite")
    make.add_argument(
        "--out", required=True, type=out_file, help="the suite as JSON Lines, for replay"
    )
    common(make)
    make.set_defaults(run=lambda args: run_make(args, writer, emit, say))

    load = actions.add_parser("import", help="import replayed responses (generic trace format)")
    load.add_argument("suite", help="the suite's name")
    load.add_argument("path", help="the replayed responses (generic trace format)")
    load.add_argument("--format", choices=FORMATS, help="skip detection from content")
    common(load)
    load.set_defaults(run=lambda args: run_import(args, writer, emit, say))

    rates = actions.add_parser("score", help="pass rates with Wilson intervals per attribute")
    rates.add_argument("suite", help="the suite's name")
    rates.add_argument("--by", default="", help="columns or attributes, comma-separated")
    common(rates)
    rates.set_defaults(run=lambda args: run_score(args, writer, emit))


def run_make(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store, store.transaction():  # a file that cannot be written: no suite
        suite = make_suite(
            store, args.sample, args.name, args.rule, args.swap_names, args.seed, args.actor
        )
        written = write_suite(store, args.name, args.out)
    if args.json:
        emit({**suite.as_json(), "out": args.out})
    say(
        f"canary suite {args.name!r}: {counted(written, 'item')} from sample {args.sample!r} "
        f"({suite.skipped} with nothing to change), written to {args.out}"
    )
    return 0


def run_import(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        report, counts = import_responses(store, args.suite, args.path, args.format, args.actor)
    scored = "scored: " + ", ".join(f"{name} {count:,}" for name, count in counts.items())
    (say if args.json else print)(scored)  # the result; with --json stdout holds the document
    return _finish_import(report, args.json, {**report.as_json(), "outcomes": counts})


def run_score(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    by = [part.strip() for part in args.by.split(",") if part.strip()]
    with writer(args) as store:
        document = score(store, args.suite, by)
    if args.json:
        emit(document)
        return 0
    if not document["rows"]:
        print(f"no replayed responses imported into {args.suite!r} yet")
    for row in document["rows"]:
        group = ", ".join(f"{k}={v}" for k, v in row["group"].items()) or "all"
        rate = "undefined" if row["pass_rate"] is None else f"{row['pass_rate']:.1%}"
        bounds = "" if row["low"] is None else f" [{row['low']:.1%}, {row['high']:.1%}]"
        print(
            f"{group}: pass {rate}{bounds} ({row['method']}); n {row['n']}, followed "
            f"{row['followed']}, leak {row['leak']}, both {row['both']}, neither {row['neither']} "
            f"(pending {row['pending']})"
        )
    return 0
