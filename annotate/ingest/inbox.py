"""The import folder: the only place on the server the app may read a file from by path.

Uploads need no folder. A path typed in the app must resolve (after links) to a file
under this folder, a setting (default data/inbox/); any other path is refused.
"""

from __future__ import annotations

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
    path = Path(folder.strip()).expanduser()
    if not folder.strip() or not path.is_dir():
        raise UsageError(f"{folder!r} is not a folder on the server; create it first")
    with store.transaction():
        put_setting(store, IMPORT_FOLDER_KEY, f'"{path.resolve()}"')
        record_act(store, actor, "setting", IMPORT_FOLDER_KEY, value=str(path.resolve()))
    return path.resolve()


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


def inbox_files(store: Store, limit: int = 200) -> list[str]:
    """Files in the import folder, relative to it, for the page to offer."""
    folder = import_folder(store)
    if not folder.is_dir():
        return []
    found = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("."))
    return [str(p.relative_to(folder)) for p in found[:limit]]
