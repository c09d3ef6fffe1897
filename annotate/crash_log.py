"""What the CLI and the Import page do with an exception that is not an AnnotateError (a bug):
the traceback goes to a log file, the user gets one line that says where it is.

Log file: $ANNOTATE_LOG, else annotate-errors.log beside the store, else in the temp folder.
"""

from __future__ import annotations

import os
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

LOG_NAME = "annotate-errors.log"
EXIT_UNEXPECTED = 4  # documented in docs/cli.md with the other exit codes


def log_path(db_path: str | os.PathLike[str] | None = None) -> Path:
    env = os.environ.get("ANNOTATE_LOG")
    if env:
        return Path(env)
    folder = Path(db_path).parent if db_path else Path(tempfile.gettempdir())
    return folder / LOG_NAME


WHOLE = "Nothing of it was stored (one transaction)."  # an import: one file, one transaction
# any other act: what it had committed stays (a judge run's verdicts commit as they arrive)
PARTIAL = "What it had not committed was rolled back."


def record_crash(
    exc: BaseException, what: str, db_path: str | os.PathLike[str] | None, kept: str = WHOLE
) -> str:
    """Append the traceback to the log; the one-line message to show instead of it. `kept`
    says what of the act's writes the store holds."""
    path = _write(exc, what, log_path(db_path))
    summary = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    where = f"details are in {path}" if path else "the log file could not be written either"
    return (
        f"{what} failed unexpectedly ({summary}); this is a bug in annotate. {kept} "
        f"Please report it; {where}"
    )


def _write(exc: BaseException, what: str, path: Path) -> Path | None:
    entry = (
        f"--- {datetime.now(UTC).isoformat(timespec='seconds')} {what} (pid {os.getpid()})\n"
        + "".join(traceback.format_exception(exc))
    )
    for target in (path, Path(tempfile.gettempdir()) / LOG_NAME):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a", encoding="utf-8") as fh:
                fh.write(entry)
            return target
        except OSError:
            continue
    return None
