"""What every `annotate` command shares: --db, --as and --json, the store opened for writing
under the acting account, one JSON document on stdout, messages on stderr, the exit codes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotate.accounts.users import cli_actor
from annotate.errors import UsageError
from annotate.store import Store, open_store, resolve_db_path

EXIT_OK, EXIT_REJECTED, EXIT_USAGE, EXIT_LOCKED = 0, 1, 2, 3


def common(command: argparse.ArgumentParser, json_flag: bool = True) -> None:
    command.add_argument("--db", help="DuckDB file (default: $ANNOTATE_DB or data/annotate.duckdb)")
    command.add_argument(
        "--as",
        dest="as_user",
        metavar="NAME",
        help="the account this act is recorded under (default: the OS user)",
    )
    if json_flag:
        command.add_argument(
            "--json", action="store_true", help="print one JSON document on stdout"
        )


def whole_number(low: int, high: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else exit 2 saying the range."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{what} must be a whole number, got {text!r}"
            ) from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{what} must be from {low:,} to {high:,}, got {value:,}"
            )
        return value

    return parse


def share(what: str) -> Callable[[str], float]:
    """An argparse type: a number from 0 to 1 (a rate, a sensitivity), else exit 2."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be a number, got {text!r}") from None
        if not 0 <= value <= 1:
            raise argparse.ArgumentTypeError(f"{what} must be between 0 and 1, got {text}")
        return value

    return parse


SEED = whole_number(0, 2**63 - 1, "a seed")  # stored as BIGINT
RESAMPLES = whole_number(50, 100_000, "the number of bootstrap resamples")
LIMIT = whole_number(1, 1_000_000, "the number of rows")


def out_file(text: str) -> str:
    """An --out file path: its folder exists and may be written, and it is not a folder.
    Checked when the arguments are read, before anything is computed or stored."""
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("give a file to write")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name inside it")
    _writable_folder(path.parent if str(path.parent) else Path("."), text)
    return text


def out_dir(text: str) -> str:
    """An --out folder: an existing folder, or one whose parent exists (it is made)."""
    path = Path(text).expanduser()
    if not text.strip():
        raise argparse.ArgumentTypeError("give a folder to write into")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file; give a folder to write into")
    _writable_folder(path if path.is_dir() else path.parent, text)
    return text


def _writable_folder(folder: Path, text: str) -> None:
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(
            f"the folder of {text} ({folder}) does not exist; create it first"
        )
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write into {folder}: permission denied")


class writer:
    """Open the store for writing for one command; a lock held elsewhere fails at once."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.path = resolve_db_path(args.db)
        self.args = args

    def __enter__(self) -> Store:
        creates = getattr(self.args, "creates_store", False)  # init, import, user add...
        if callable(creates):
            creates = creates(self.args)
        if not creates and str(self.path) != ":memory:" and not self.path.exists():
            raise UsageError(
                f"no store at {self.path}: check --db (or ANNOTATE_DB); `annotate init` or "
                "`annotate import FILE` creates one"
            )
        self.made = str(self.path) != ":memory:" and not self.path.exists()
        self.store = open_store(self.path)
        try:  # every act of the command is recorded under this name
            self.args.actor = cli_actor(self.store, getattr(self.args, "as_user", None))
        except BaseException:
            self._close(failed=True)
            raise
        return self.store

    def __exit__(self, failure: object, *_: object) -> None:
        self._close(failed=failure is not None)

    def _close(self, failed: bool) -> None:
        """A store this command made and then failed in, or made for a --plan-only run, left
        holding nothing, is removed: a file that cannot be imported (binary, of no known
        format) or a plan from files leaves no empty store."""
        planned = getattr(self.args, "plan_only", False)
        remove = (failed or planned) and self.made and _holds_nothing(self.store)
        self.store.close()
        if remove:
            for leftover in (self.path, self.path.with_name(self.path.name + ".wal")):
                leftover.unlink(missing_ok=True)


def emit(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, default=str) + "\n")


def say(message: str) -> None:
    print(message, file=sys.stderr)


def _holds_nothing(store: Store) -> bool:
    from annotate.store.status import holds_nothing

    try:
        return holds_nothing(store)
    except Exception:  # the store itself failed: leave it for the user to look at
        return False


# controls (newline, carriage return, terminal escape sequences) and bidi marks in text from
# the data or a bundle would break the table or hide what a line says; they print as escapes
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown(text: object) -> str:
    """`text` as a terminal can show it without being steered by it: `a\\nb`, `\\u202e`."""
    return _UNSHOWN.sub(lambda m: m.group().encode("unicode_escape").decode(), str(text))
