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
from annotate.cli.console import shown
from annotate.errors import UsageError, counted
from annotate.spend.pricing import spend_text

PRINTED_ERRORS = 20
LISTED = ("trace_id", "claim_index", "start_offset", "end_offset", "version", "text")


def add_claims_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    command = commands.add_parser(
        "claims",
        help="create the claims of a sample's traces, once; `claims list` shows them",
    )
    command.add_argument(
        "action", nargs="?", choices=("list",),
        help="list: each claim's trace, index, text, offsets and version (what import-labels needs)",
    )  # fmt: skip
    command.add_argument("--sample", required=True, help="the sample whose traces get claims")
    command.add_argument("--trace", help="with list: only this trace's claims")
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
    if args.action == "list":
        return run_list(args, writer, emit, say)
    if args.trace is not None:
        raise UsageError("--trace goes with `annotate claims list`")
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
    summary = (
        f"{args.sample}: {counted(report.traces, 'trace')}; {counted(report.created, 'claim')} "
        f"created ({report.extractor}); {counted(report.already_had, 'trace')} already had claims; "
        f"{report.failed:,} failed; {report.without_claims:,} still without claims"
    )
    if args.json:  # stdout holds the document alone
        say(summary)
    else:
        print(summary)
    for error in report.errors[:PRINTED_ERRORS]:
        say(f"  {error['trace_id']}: {error['message']}")
    if report.failed > PRINTED_ERRORS:
        say("  ... and more: every call is recorded in llm_calls")
    if report.spend is not None and not args.json:
        print(f"spend: {spend_text(report.spend)}")
    return 1 if report.failed else 0


def run_list(args: argparse.Namespace, writer: Any, emit: Any, say: Any) -> int:
    from annotate.claims.listing import list_claims

    with writer(args) as store:
        claims = list_claims(store, args.sample, args.trace)
    if args.json:
        emit({"sample": args.sample, "trace_id": args.trace, "claims": claims})
        return 0
    if not claims:
        say(
            f"{args.sample}: no claims yet; make them with `annotate claims --sample {args.sample}`"
        )
        return 0
    print("trace_id\tclaim_index\tstart\tend\tversion\ttext")
    for claim in claims:
        print("\t".join(shown("" if claim[key] is None else claim[key]) for key in LISTED))
    return 0


def _progress(say: Any) -> Callable[[int, int], None]:
    """At most one line a second on stderr, and only for runs long enough to need it."""
    state = {"last": time.monotonic()}

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - state["last"] >= 1.0:
            state["last"] = now
            say(f"  {done:,} of {total:,} traces")

    return show
