"""The `annotate` command: argument parsing, exit codes and printing; the work is in the library.

Exit codes: 0 everything imported (or exact duplicates), 1 some rows rejected or
conflicting, 2 usage errors (bad arguments, unreadable or empty file), 3 the store is
locked by another process, 4 an unexpected error (a bug: one line on stderr, the traceback
in the log file it names). With --json one JSON document goes to stdout and every
message to stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from annotate.cli.agreement import add_agreement_commands
from annotate.cli.canary import add_canary_commands
from annotate.cli.claims import add_claims_commands
from annotate.cli.console import (
    EXIT_LOCKED,
    EXIT_REJECTED,
    EXIT_USAGE,
    common,
    emit,
    say,
    writer,
)
from annotate.cli.imports import add_import_commands
from annotate.cli.people import add_people_commands
from annotate.cli.rates import add_rates_commands
from annotate.cli.rubrics import add_rubric_commands
from annotate.cli.samples import add_sample_commands
from annotate.crash_log import EXIT_UNEXPECTED, record_crash
from annotate.errors import AnnotateError, InputError, StoreLockedError, UsageError
from annotate.store import resolve_db_path


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except StoreLockedError as exc:
        say(f"error: {exc}")
        return EXIT_LOCKED
    except (UsageError, InputError) as exc:
        say(f"error: {exc}")
        return EXIT_USAGE
    except AnnotateError as exc:
        say(f"error: {exc}")
        return EXIT_REJECTED
    except Exception as exc:  # a bug: one line here, the traceback in the log file
        say("error: " + record_crash(exc, f"annotate {args.command}", _db_of(args)))
        return EXIT_UNEXPECTED


def _db_of(args: argparse.Namespace) -> Path | None:
    try:
        return resolve_db_path(getattr(args, "db", None))
    except Exception:
        return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="annotate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    add_import_commands(commands)
    add_sample_commands(commands, common, writer, emit, say)
    add_people_commands(commands, common, writer, emit, say)
    add_claims_commands(commands, common, writer, emit, say)
    add_agreement_commands(commands, common, writer, emit, say)
    add_rates_commands(commands, common, writer, emit, say)
    add_rubric_commands(commands, common, writer, emit, say)
    add_canary_commands(commands, common, writer, emit, say)
    return parser


if __name__ == "__main__":
    sys.exit(main())
