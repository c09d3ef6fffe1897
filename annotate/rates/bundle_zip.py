"""Reading an auditor bundle's zip for its check, as an attacker may have made it.

Only the files a bundle is made of are read, each only when its size in the zip is the one
the manifest gives and at most MAX_MEMBER_BYTES (a zip bomb is named, not inflated). A name
held twice in the zip or listed twice in the manifest is a problem: which copy a reader gets
depends on the tool. A file the manifest lists that is not a bundle file fails too: nothing
checks its content against the tables, and `../` names would write outside the folder.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from annotate.errors import UsageError
from annotate.rates.exports import sha256

MANIFEST = "manifest.json"
MAX_MEMBER_BYTES = 2**30  # 1 GiB: far above a bundle of a million traces' frame
READABLE = (
    "frame.json", "sample.csv", "agreement.json", "calibration.json", "rates.json", "ratings.json",
)  # fmt: skip


def _manifest(bundle: zipfile.ZipFile, path: str | Path) -> dict[str, Any]:
    damaged = "the bundle was damaged or changed after export"
    if bundle.getinfo(MANIFEST).file_size > MAX_MEMBER_BYTES:
        raise UsageError(f"{path}: its {MANIFEST} is larger than 1 GiB; {damaged}")
    try:
        manifest = json.loads(bundle.read(MANIFEST))
        if not all(isinstance(f["path"], str) for f in manifest["files"]):
            raise TypeError("a file's path is not text")
    except (ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
        raise UsageError(
            f"{path}: its {MANIFEST} is not a bundle manifest ({type(exc).__name__}: {exc}); "
            f"{damaged}"
        ) from None
    return manifest  # type: ignore[no-any-return]


def _member_problem(
    name: str, entry: Any, info: zipfile.ZipInfo | None, known: frozenset[str]
) -> str | None:
    """Why `name` is not read, or None."""
    if name not in known:
        return f"{name}: not a file of an annotate bundle (nothing checks its content)"
    if info is None:
        return f"{name}: listed in the manifest but missing"
    if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
        return f"{name}: its manifest entry has no SHA-256"
    if info.file_size > MAX_MEMBER_BYTES:
        return (
            f"{name}: holds {info.file_size:,} bytes, more than the check reads "
            f"({MAX_MEMBER_BYTES:,})"
        )
    if "bytes" in entry and entry["bytes"] != info.file_size:  # so the hash differs: not read
        return (
            f"{name}: SHA-256 differs from the manifest (changed after export): it holds "
            f"{info.file_size:,} bytes, the manifest says {entry['bytes']}"
        )
    return None


def read_bundle(
    path: str | Path, known: frozenset[str]
) -> tuple[dict[str, Any], dict[str, bytes], list[str]]:
    """The manifest, the content of each listed bundle file whose hash was checked, and the
    problems found; a file that is no zip or has no readable manifest raises UsageError."""
    try:
        bundle = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise UsageError(f"{path}: not a readable zip ({exc})") from None
    with bundle:
        counts = Counter(info.filename for info in bundle.infolist())
        if MANIFEST not in counts:
            raise UsageError(f"{path}: no {MANIFEST}; this is not an annotate bundle")
        manifest = _manifest(bundle, path)
        paths = Counter(f["path"] for f in manifest["files"])
        problems = [
            f"{n}: held {c} times in the zip (a reader may get either copy)"
            for n, c in sorted(counts.items())
            if c > 1
        ]
        problems += [f"{n}: listed {c} times in the manifest" for n, c in paths.items() if c > 1]
        problems += [
            f"{n}: in the zip but not in the manifest"
            for n in sorted(set(counts) - set(paths) - {MANIFEST})
        ]
        contents: dict[str, bytes] = {}
        for entry in sorted(manifest["files"], key=lambda f: f["path"]):
            name = entry["path"]
            info = bundle.getinfo(name) if name in counts else None
            problem = _member_problem(name, entry, info, known)
            if problem is None:
                try:
                    contents[name] = bundle.read(name)
                except (zipfile.BadZipFile, OSError, ValueError) as exc:
                    problem = f"{name}: damaged in the zip ({exc})"
                else:
                    if sha256(contents[name]) != entry["sha256"]:
                        problem = (
                            f"{name}: SHA-256 differs from the manifest (changed after export)"
                        )
            if problem:
                problems.append(problem)
    return manifest, contents, problems
