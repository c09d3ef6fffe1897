"""The `annotate check` command: JSON Lines of answers in, one grounding verdict a line out.
Parsing and printing only; the work is in annotate.check.

Exit codes: 0 every line checked, 1 some lines rejected (their error lines say why), 2 usage
errors (no rubric, an uncalibrated or edited export, no key without --baseline).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from typing import IO, Any

from annotate.check.export import RubricExport, export_of, load_export
from annotate.check.grounding import DEFAULT_TIMEOUT, GroundingCheck
from annotate.check.lines import Tally, check_lines
from annotate.check.result import UNKNOWN
from annotate.cli.console import EXIT_REJECTED, out_file, whole_number
from annotate.errors import UsageError, counted


def add_check_commands(commands: Any, common: Any, writer: Any, emit: Any, say: Any) -> None:
    check = commands.add_parser(
        "check",
        help="runtime grounding check: JSON Lines of {context, response} -> grounded_answer",
        description="Check answers against their context with a calibrated rubric export "
        "(`annotate rubric export N`), or offline with the baseline judge.",
    )
    check.add_argument(
        "path", nargs="?", default="-", help="JSON Lines of {context, response[, request, id, "
        "claims]} (default: stdin)",
    )  # fmt: skip
    check.add_argument("--rubric", metavar="FILE.yaml", help="the calibrated rubric export")
    check.add_argument(
        "--baseline", action="store_true",
        help="judge offline with the baseline judge (no key); without --rubric, with the "
        "store's current rubric version",
    )  # fmt: skip
    check.add_argument("--model", help="judge model (default: the one the card was made for)")
    check.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT,
        help=f"seconds per answer before the fallback verdict (default {DEFAULT_TIMEOUT:g})",
    )  # fmt: skip
    check.add_argument(
        "--fallback", choices=(UNKNOWN, "false"), default=UNKNOWN,
        help="the verdict of an answer whose check failed or timed out (never true)",
    )  # fmt: skip
    check.add_argument(
        "--concurrency", type=whole_number(1, 256, "--concurrency"), default=8,
        help="answers checked at once (default 8)",
    )  # fmt: skip
    check.add_argument(
        "--uncalibrated", action="store_true",
        help="accept an export of a version never marked calibrated (its numbers are null)",
    )  # fmt: skip
    check.add_argument("--out", type=out_file, help="write the lines here (default: stdout)")
    common(check, json_flag=False)
    check.set_defaults(run=lambda args: run_check(args, say))


def run_check(args: argparse.Namespace, say: Any) -> int:
    export = _export(args)
    fallback: bool | str = False if args.fallback == "false" else UNKNOWN
    options = {"model": args.model, "timeout": args.timeout, "fallback": fallback}
    tally = Tally()
    with ExitStack() as stack:
        check = stack.enter_context(GroundingCheck(export, baseline=args.baseline, **options))
        source = _input(args.path, stack)
        out = stack.enter_context(open(args.out, "w", encoding="utf-8")) if args.out else sys.stdout
        for line in check_lines(check, source, args.concurrency):
            tally.count(line)
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            out.flush()
    say(
        f"checked {counted(tally.checked, 'answer')} with {check.judge} ({check.model}): "
        f"{tally.grounded} grounded, {tally.ungrounded} not, {tally.unknown} unknown"
        + (f"; {counted(tally.rejected, 'line')} rejected" if tally.rejected else "")
    )
    return EXIT_REJECTED if tally.rejected else 0


def _export(args: argparse.Namespace) -> RubricExport:
    if args.rubric:
        return load_export(args.rubric, require_calibrated=not (args.uncalibrated or args.baseline))
    if not args.baseline:
        raise UsageError(
            "annotate check needs --rubric FILE.yaml (write it with `annotate rubric export N`), "
            "or --baseline to check offline"
        )
    from annotate.judge.rubrics.exchange import export_document
    from annotate.judge.rubrics.versions import current_version
    from annotate.store import open_store, resolve_db_path

    store = open_store(resolve_db_path(args.db), read_only=True)
    try:
        document = export_document(store, current_version(store))
    finally:
        store.close()
    return export_of(document, "the store's current rubric", require_calibrated=False)


def _input(path: str, stack: ExitStack) -> IO[bytes]:
    """Bytes: a line that is not UTF-8 is rejected on its own line, the others are checked."""
    if path == "-":
        return sys.stdin.buffer
    try:
        return stack.enter_context(open(path, "rb"))
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read it ({exc.strerror}); pass a JSON Lines file or -"
        ) from None
