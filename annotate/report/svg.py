"""Charts rendered to SVG by vl-convert in a helper process, started ahead of need.

vl-convert holds the GIL while its engine starts (~0.3 s), so a thread gave a report no head
start; a child process starts it on the other core while the report computes its numbers.
If the child cannot start, or stops, charts are rendered in this process: the same SVG.
"""

from __future__ import annotations

import atexit
import json
import subprocess
import sys
import threading
from typing import Any

# The child: start the engine at once, then one JSON spec per line in, one JSON reply out.
_CHILD = r"""
import json, sys
import vl_convert
vl_convert.vegalite_to_svg({"mark": "point", "data": {"values": []}})
for line in sys.stdin.buffer:
    try:
        reply = {"svg": vl_convert.vegalite_to_svg(json.loads(line))}
    except Exception as exc:
        reply = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
    sys.stdout.buffer.flush()
"""


class ChartError(ValueError):
    """vl-convert refused a spec (a bug in a chart, not in the data)."""


class Renderer:
    """One helper process, shared by every thread of this one; one chart at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._failed = False

    def start(self) -> None:
        """Start the helper (and its engine) now, without waiting for it."""
        with self._lock:
            self._ensure()

    def svg(self, spec: dict[str, Any]) -> str:
        message = json.dumps(spec).encode() + b"\n"
        with self._lock:
            process = self._ensure()
            reply = _ask(process, message) if process is not None else None
            if reply is None:  # no helper, or it stopped: render here (a new one next time)
                if process is not None:
                    _stop(process)
                self._process = None
                return _in_process(spec)
        found = json.loads(reply)
        if "error" in found:
            raise ChartError(f"vl-convert could not render a chart: {found['error']}")
        return str(found["svg"])

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                _stop(self._process)
                self._process = None

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if self._failed:
            return None
        try:
            self._process = subprocess.Popen(  # noqa: S603 - our own interpreter and code
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            self._failed = True
            return None
        return self._process


def _ask(process: subprocess.Popen[bytes], message: bytes) -> bytes | None:
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(message)
        process.stdin.flush()
        reply = process.stdout.readline()
    except (OSError, ValueError):  # a broken or closed pipe
        return None
    return reply or None


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        if process.stdin is not None:
            process.stdin.close()  # the child's loop ends at end of input
        process.wait(timeout=2)
    except (OSError, subprocess.TimeoutExpired):
        process.kill()


def _in_process(spec: dict[str, Any]) -> str:
    import vl_convert

    try:
        return str(vl_convert.vegalite_to_svg(spec))
    except Exception as exc:
        raise ChartError(f"vl-convert could not render a chart: {exc}") from exc


RENDERER = Renderer()
atexit.register(RENDERER.close)
