"""A large JSON Lines import's rows read and checked in a process of its own, beside the inserts.

An import spends about half its time in Python reading and checking rows and building the
insert's Arrow tables, and half in DuckDB's inserts; in one process they take turns on one
core. Here a child process (`python -m annotate.ingest.reader_process PATH IMPORT_ID FD`)
reads the file, checks its rows exactly as the import does (`annotate.ingest.parsed`), builds
each batch's tables and writes the batch, pickled, to a pipe; the import classifies and
inserts batch N while the child reads batch N+1. The rows, their order, every message and
content hash are the same as when the import reads them itself (tests/test_import_reader.py
compares the stores).

Only for a file the import would read as plain JSON Lines (no `--map`, no check of a caller's
own) of at least PROCESS_BYTES, on a machine with two cores or more: a child costs about
0.2 s to start. The child never touches the store. It runs in a session of its own, so Ctrl-C
reaches the import alone, which then kills it; a child whose import is gone ends at its next
write (the pipe is broken). A child that fails sends its traceback, which the import raises.
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import struct
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, cast

import pyarrow

from annotate.errors import UsageError
from annotate.ingest.collector import collector_paused
from annotate.ingest.generic import jsonl_trace_item
from annotate.ingest.parsed import Item, Parsed, parse_items
from annotate.traces import pandas_probe

PROCESS_BYTES = 16 << 20  # a smaller file is read in the import's own process
READERS = 2
PIECE = 250  # rows a reader parses and builds at a time (2,000: 15-40 MB more a reader)
# A reader's peak RSS, for the import's share of the memory limit (Store.transaction): 113-115
# MB measured (bench_import_memory), of which 61 MB are the interpreter and its modules.
READER_BYTES = 120 * 10**6
_LENGTH = struct.Struct("<Q")


class ReaderFailed(RuntimeError):
    """The reader process failed: a bug in annotate, with the child's traceback."""


@dataclass(frozen=True)
class Ended:
    """A reader's last message: it has read to the end of the file."""

    peak_rss: int  # its peak resident memory, in bytes (VmHWM)


def wanted(fmt: str, mapped: bool, checked: bool, size: int) -> bool:
    """Whether an import of this file reads its rows in reader processes (a setting that is
    not valid is refused whatever the file)."""
    count = readers()
    return fmt == "jsonl" and not mapped and not checked and size >= PROCESS_BYTES and count > 0


def readers() -> int:
    """How many reader processes a large JSON Lines import starts: ANNOTATE_IMPORT_READERS
    (0: none, the import reads its rows itself), else READERS, or none on one core."""
    given = os.environ.get("ANNOTATE_IMPORT_READERS", "").strip()
    if given:
        if not given.isdigit() or int(given) > 16:
            raise UsageError(
                f"ANNOTATE_IMPORT_READERS={given!r} is not a number of reader processes; "
                "give 0 (the import reads its rows itself) to 16"
            )
        return int(given)
    return READERS if cores() > 1 else 0


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class Batches:
    """The file's batches, in order: batch i from reader i % count. `peaks` holds each
    reader's peak resident memory once every batch has been read."""

    def __init__(self, readers: list[_Reader]) -> None:
        self.readers = readers
        self.peaks: list[int] = []

    def __iter__(self) -> Iterator[Parsed]:
        for turn in itertools.count():
            got = self.readers[turn % len(self.readers)].next()
            if isinstance(got, Ended):  # the last batch was the one before
                break
            yield got
        for reader in self.readers:  # each other reader has read to the end too
            got = reader.last if reader.last is not None else reader.next()
            if not isinstance(got, Ended):
                raise ReaderFailed("an import's reader process has a batch beyond the file's end")
            self.peaks.append(got.peak_rss)


@dataclass(frozen=True)
class Reading:
    """What the reader processes read: the file, in runs of `batch` lines (run i the
    (i % count)-th reader's), each parsed and built `piece` lines at a time."""

    path: str
    import_id: int
    batch: int
    buffer: int
    count: int = 1
    piece: int = PIECE


@contextmanager
def parsed_batches(reading: Reading) -> Iterator[Batches]:
    """The file's batches as `reading.count` reader processes parse them; the processes end
    with the block."""
    with ExitStack() as stack:
        said = json.dumps(asdict(reading))
        yield Batches([stack.enter_context(_reader([said, str(k)])) for k in range(reading.count)])


class _Reader:
    def __init__(self, source: IO[bytes], child: subprocess.Popen[bytes], errors: IO[bytes]):
        self.source, self.child, self.errors = source, child, errors
        self.last: Ended | None = None

    def next(self) -> Parsed | Ended:
        """The reader's next batch, or Ended."""
        head = self.source.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            raise self._ended()
        (length,) = _LENGTH.unpack(head)
        payload = self.source.read(length)
        if len(payload) < length:
            raise self._ended()
        got = pickle.loads(payload)
        if isinstance(got, str):  # the child's traceback
            raise ReaderFailed(
                f"{got.strip().splitlines()[-1]} (in an import's reader process)\n{got}"
            )
        if isinstance(got, Ended):
            self.last = got
        return cast(Parsed | Ended, got)

    def _ended(self) -> ReaderFailed:
        """The child went before its last message (killed, or out of memory)."""
        self.child.wait()
        self.errors.seek(0)
        said = self.errors.read().decode("utf-8", "replace").strip()
        return ReaderFailed(
            "an import's reader process ended before the file did "
            f"(exit {self.child.returncode})" + (f": {said}" if said else "")
        )


@contextmanager
def _reader(arguments: list[str]) -> Iterator[_Reader]:
    read, write = os.pipe()
    with tempfile.TemporaryFile() as errors, os.fdopen(read, "rb", buffering=1 << 20) as source:
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", __name__, str(write), *arguments],
                pass_fds=(write,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=errors, env=_child_env(), start_new_session=True,
            )  # fmt: skip
        finally:
            os.close(write)  # the child's end: EOF here once the child has gone
        try:
            yield _Reader(source, child, errors)
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()


def _child_env() -> dict[str, str]:
    """The import's environment, with this package importable wherever it was found."""
    root = str(Path(__file__).resolve().parents[2])
    paths = [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _send(out: IO[bytes], payload: bytes) -> None:
    out.write(_LENGTH.pack(len(payload)))
    out.write(payload)
    out.flush()


def read_batches(reading: Reading, index: int = 0) -> Iterator[Parsed]:
    """The file's rows as the import reads them (read_jsonl_traces, then parse_items), each
    run of `reading.batch` lines a batch with its tables built: the index-th run and every
    count-th after it, each (an empty one too) up to the file's last line. A run's rows are
    parsed and built `reading.piece` lines at a time: a reader holds a piece's rows, not a
    run's."""
    with open(reading.path, "rb", buffering=reading.buffer) as fh:
        run = _Run(reading)
        ours = False
        for number, raw in enumerate(fh, start=1):
            place = (number - 1) % reading.batch
            ours = (number - 1) // reading.batch % reading.count == index
            if not ours:
                continue
            run.add(jsonl_trace_item(raw, number))
            if place == reading.batch - 1:
                yield run.built(fh.tell())
                run = _Run(reading)
                ours = False
        if ours:  # the file's last run, short
            yield run.built(fh.tell())


class _Run:
    """One batch's rows as they are read: each piece's parsed and built into tables."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading
        self.items: list[Item] = []
        self.parts: list[Parsed] = []
        self.traces = 0

    def add(self, item: Item | None) -> None:
        if item is not None:
            self.items.append(item)
        if len(self.items) >= self.reading.piece:
            self._piece()

    def _piece(self) -> None:
        part = parse_items(self.items, {})
        self.parts.append(part.built(self.reading.import_id, first=self.traces))
        self.traces += len(part.seen)
        self.items = []

    def built(self, position: int) -> Parsed:
        if self.items or not self.parts:
            self._piece()
        parsed = Parsed.joined(self.parts)
        parsed.position = position
        return parsed


def main(argv: list[str]) -> int:
    fd, reading, index = int(argv[0]), Reading(**json.loads(argv[1])), int(argv[2])
    # pyarrow imports pandas on the first array it builds from a list, only to ask whether the
    # list is a pandas object (0.35 s and 40 MB a reader); a reader never needs it
    sys.meta_path.insert(0, pandas_probe.Refused())
    # the system's allocator: mimalloc, pyarrow's default, kept 30 MB more a reader
    pyarrow.set_memory_pool(pyarrow.system_memory_pool())
    out = os.fdopen(fd, "wb")
    try:
        with collector_paused():
            for parsed in read_batches(reading, index):
                _send(out, pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL))
        _send(out, pickle.dumps(Ended(_peak_rss())))
    except BrokenPipeError:  # the import is gone (it failed, or was interrupted)
        return 0
    except BaseException:  # a bug: the import raises it
        with suppress(OSError):
            _send(out, pickle.dumps(traceback.format_exc()))
        return 1
    return 0


def _peak_rss() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":  # as the module itself, so that what it pickles names it
    from annotate.ingest.reader_process import main as _main

    sys.exit(_main(sys.argv[1:]))
