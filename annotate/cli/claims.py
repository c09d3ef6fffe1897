"""The `annotate claims` command: parsing and printing only; the work is in annotate.claims.extraction.

Exit codes: 0 every trace has its claims or kept its own, 1 some traces failed (recorded in
llm_calls; a rerun retries only those), 2 usage errors (unknown sample, no API key for llm).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from annotate.claims.extraction import EXTRACTORS, MAX_CLAIMS, create_claims
from annotate.errors import counted

PRINTED_ERRORS = 20


def add_claims_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser("claims", help="create the claims of a sample's traces, once")
    command.add_argument("--sample", required=True, help="the sample whose traces get claims")
    command.add_argument(
        "--extractor",
        choices=EXTRACTORS,
        default="auto",
        help="auto: llm when ANTHROPIC_API_KEY is set, else sentences; "
        "provided: only the trace's own claims. Traces with claims always keep them",
    )
    command.add_argument(
        "--max-claims",
        type=int,
        default=MAX_CLAIMS,
        help=f"most claims the LLM extracts per response (default {MAX_CLAIMS})",
    )
    common(command)
    command.set_defaults(run=lambda args: run_claims(args, writer, emit, say))


def run_claims(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    with writer(args) as store:
        report = create_claims(
            store,
            args.sample,
            args.extractor,
            progress=_progress(say),
            max_claims=args.max_claims,
            actor=args.actor,
        )
    if args.json:
        emit(report.as_json())
    say(
        f"{args.sample}: {counted(report.traces, 'trace')}; {counted(report.created, 'claim')} "
        f"created ({report.extractor}); {counted(report.already_had, 'trace')} already had claims; "
        f"{report.failed} failed; {report.without_claims} still without claims"
    )
    for error in report.errors[:PRINTED_ERRORS]:
        say(f"  {error['trace_id']}: {error['message']}")
    if report.failed > PRINTED_ERRORS:
        say("  ... and more: every call is recorded in llm_calls")
    return 1 if report.failed else 0


def _progress(say: Any) -> Callable[[int, int], None]:
    """At most one line a second on stderr, and only for runs long enough to need it."""
    state = {"last": time.monotonic()}

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - state["last"] >= 1.0:
            state["last"] = now
            say(f"  {done:,} of {total:,} traces")

    return show
