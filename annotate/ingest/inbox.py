"""The import folder: the only place on the server the app may read a file from by path.

Uploads need no folder. A path typed in the app must resolve (after links) to a file
under this folder, a setting (default data/inbox/); any other path is refused.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path

from annotate.accounts.activity import Actor, record_act
from annotate.errors import UsageError
from annotate.store import Store
from annotate.store.assignments import get_setting, put_setting

IMPORT_FOLDER_KEY = "import_folder"
DEFAULT_IMPORT_FOLDER = Path("data") / "inbox"


def import_folder(store: Store) -> Path:
    value = get_setting(store, IMPORT_FOLDER_KEY)
    return Path(str(value).strip('"')) if value else DEFAULT_IMPORT_FOLDER


def set_import_folder(store: Store, folder: str, actor: Actor | str | None = None) -> Path:
    """Make `folder` the import folder. It must exist, except the default (data/inbox), which
    is made when it is asked for again."""
    text = folder.strip()
    shown = text if len(text) <= 80 else text[:80] + "…"
    try:
        path = Path(text).expanduser().resolve()
        if text and path == DEFAULT_IMPORT_FOLDER.resolve():
            path.mkdir(parents=True, exist_ok=True)
        is_folder = bool(text) and path.is_dir()
    except (OSError, RuntimeError) as exc:  # a name too long for the system, a loop of links
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"{shown!r} cannot be a folder on the server ({reason})") from None
    if not is_folder:
        raise UsageError(f"{shown!r} is not a folder on the server; create it first")
    with store.transaction():
        put_setting(store, IMPORT_FOLDER_KEY, f'"{path}"')
        record_act(store, actor, "setting", IMPORT_FOLDER_KEY, value=str(path))
    return path


def inbox_path(store: Store, text: str) -> Path:
    """The file `text` names inside the import folder (relative to it, or absolute)."""
    folder = import_folder(store).resolve()
    candidate = Path(text.strip()).expanduser()
    resolved = (candidate if candidate.is_absolute() else folder / candidate).resolve()
    if folder not in resolved.parents:
        raise UsageError(
            f"{text.strip()!r} is outside the import folder {folder}: the app reads files only "
            "from there. Upload the file, or move it into that folder."
        )
    if not resolved.is_file():
        raise UsageError(f"{text.strip()!r} is not a file in the import folder {folder}")
    return resolved


SCAN_LIMIT = 10_000  # entries looked at for the list: a folder as wide as / stays quick


def inbox_files(store: Store, limit: int = 200) -> list[str]:
    """Files in the import folder, relative to it, for the page to offer: among the first
    SCAN_LIMIT entries found under it (any file under it can still be typed by path)."""
    folder = import_folder(store)
    if not folder.is_dir():
        return []
    entries = islice(folder.rglob("*"), SCAN_LIMIT)
    found = sorted(p for p in entries if not p.name.startswith(".") and p.is_file())
    return [str(p.relative_to(folder)) for p in found[:limit]]
