"""The `annotate claims` command: parsing and printing only."""

from __future__ import annotations

import argparse
from typing import Any

from annotate.claims import EXTRACTORS, create_claims


def add_claims_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser("claims", help="create the claims of a sample's traces")
    command.add_argument("--sample", required=True)
    command.add_argument(
        "--extractor",
        choices=EXTRACTORS,
        default="auto",
        help="auto: llm when ANTHROPIC_API_KEY is set, else sentences; traces with claims keep them",
    )
    common(command)
    command.set_defaults(run=lambda args: run_claims(args, writer, emit, say))


def run_claims(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        report = create_claims(store, args.sample, args.extractor)
    if args.json:
        emit(report.as_json())
    say(
        f"{args.sample}: {report.traces} traces; {report.created} claims created ({report.extractor}), "
        f"{report.already_had} traces already had claims, {report.failed} failed"
    )
    for error in report.errors[:20]:
        say(f"  {error['trace_id']}: {error['message']}")
    return 1 if report.failed else 0
