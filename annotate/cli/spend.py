"""The `annotate spend` command: what the LLM calls cost, per sample and rubric version;
parsing and printing only, the work is in annotate.spend."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from annotate.cli.console import shown
from annotate.spend.pricing import spend_report, spend_text

PURPOSES = {  # how people name what a call was for
    "judge": "judge",
    "claim_extraction": "claims --extractor llm",
    "rubric_revision": "rubric propose",
}


def since_date(text: str) -> datetime:
    """An argparse type: an ISO date or date and time (2026-11-01, 2026-11-01T09:30)."""
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--since must be a date like 2026-11-01 or 2026-11-01T09:30, got {text!r}"
        ) from None


def add_spend_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    spend = commands.add_parser(
        "spend", help="tokens and dollars the LLM calls used, per sample and rubric version"
    )
    spend.add_argument("--sample", help="only this sample's calls")
    spend.add_argument("--since", type=since_date, help="only calls from this date (ISO) on")
    common(spend)
    spend.set_defaults(run=lambda args: run_spend(args, writer, emit))


def run_spend(args: argparse.Namespace, writer: Any, emit: Any) -> int:
    with writer(args) as store:
        report = spend_report(store, args.sample, args.since)
    if args.json:
        emit(report)
        return 0
    for row in report["rows"]:
        version = f"rubric v{row['rubric_version']}" if row["rubric_version"] else "no rubric"
        where = shown(row["sample"]) if row["sample"] else "no sample"
        what = PURPOSES.get(row["purpose"], row["purpose"])
        print(f"{where}\t{version}\t{what}\t{spend_text(row)}")
    print(f"total: {spend_text(report['total'])}")
    return 0
