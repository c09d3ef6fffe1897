"""The `annotate` command: argument parsing, exit codes and printing; the work is in the library.

Exit codes: 0 everything imported (or exact duplicates), 1 some rows rejected or
conflicting (or the act was refused: the message says why), 2 usage errors (bad
arguments, unreadable or empty file, a bad setting), 3 the store is locked by another
process, 4 an unexpected error (a bug: one line on stderr, the traceback in the log file
it names), 5 `gate`: a warning only, 130 interrupted (Ctrl-C), 141 the reader of the
output left. With --json one JSON document goes to stdout and every message to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from annotate.cli.console import (
    EXIT_LOCKED,
    EXIT_REJECTED,
    EXIT_USAGE,
    common,
    emit,
    say,
    writer,
)
from annotate.crash_log import EXIT_UNEXPECTED, PARTIAL, WHOLE, record_crash
from annotate.errors import (
    AnnotateError,
    InputError,
    Interrupted,
    InterruptedAfterCommit,
    StoreLockedError,
    UsageError,
)
from annotate.store import resolve_db_path

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader left


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except InterruptedAfterCommit as exc:  # Ctrl-C too late: what is stored, truthfully
        say(f"interrupted: {exc}")
        return EXIT_INTERRUPTED
    except (KeyboardInterrupt, Interrupted):  # Ctrl-C: the user's choice, not a bug
        say(
            "interrupted: the step in progress was rolled back (an import stores nothing of a file it did not finish)"
        )
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`annotate rates | head`): no bug, no log
        _drop_stdout()
        return EXIT_BROKEN_PIPE
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
        kept = WHOLE if args.command in ("import", "import-labels") else PARTIAL
        say("error: " + record_crash(exc, f"annotate {args.command}", _db_of(args), kept))
        return EXIT_UNEXPECTED


def _drop_stdout() -> None:
    """What is still buffered for stdout goes nowhere, so the flush at exit cannot fail again
    (the recipe of Python's signal module documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _db_of(args: argparse.Namespace) -> Path | None:
    try:
        return resolve_db_path(getattr(args, "db", None))
    except Exception:
        return None


# Each command group: its module in annotate/cli, the function adding its commands, and the
# commands. `annotate CMD` imports CMD's group alone, so a command loads its own library and no
# other (pandas for the rates, sqlglot for the samples, altair nowhere but the chart helper);
# `annotate --help` and an unknown command load every group.
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "imports": (
        "add_import_commands",
        ("import", "import-labels", "status", "errors", "init", "demo-data"),
    ),
    "samples": ("add_sample_commands", ("sample", "samples")),
    "people": ("add_people_commands", ("user", "activity", "assign")),
    "claims": ("add_claims_commands", ("claims",)),
    "agreement": ("add_agreement_commands", ("agreement", "calibration", "report", "judge-labels")),
    "rates": (
        "add_rates_commands",
        (
            "rates",
            "gate",
            "plan-labels",
            "trend",
            "export-rates",
            "export-otel",
            "bundle",
            "verify-bundle",
        ),
    ),
    "rubrics": ("add_rubric_commands", ("judge", "rubric")),
    "canary": ("add_canary_commands", ("canary",)),
    "spend": ("add_spend_commands", ("spend",)),
    "check": ("add_check_commands", ("check",)),
    "connectors": ("add_connector_commands", ("export-feedback",)),
    "ratings": ("add_ratings_commands", ("judge-ratings",)),
}


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser of the command `argv` names (every command when it names none we know)."""
    parser = argparse.ArgumentParser(prog="annotate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    named = next((word for word in argv if not word.startswith("-")), None)
    wanted = [group for group, (_, names) in GROUPS.items() if named in names] or list(GROUPS)
    for group in wanted:
        adder, _ = GROUPS[group]
        add = getattr(importlib.import_module(f"annotate.cli.{group}"), adder)
        add(commands, common, writer, emit, say)
    return parser


if __name__ == "__main__":
    sys.exit(main())
