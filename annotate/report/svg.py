"""Charts built and rendered to SVG in a helper process, started ahead of need.

vl-convert holds the GIL while its engine starts (~0.3 s), and a report's charts need altair and
pandas (~0.3 s to import): a child process does both on the other core while the report
computes its numbers, so `annotate report` never imports them. If the child cannot start, or
stops, charts are built and rendered in this process: the same spec, the same SVG.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# The child: start the engine and import the charts at once, then one JSON ask per line in
# (a spec to render, or a chart of annotate.report.charts to build and render), one reply out.
_CHILD = r"""
import json, sys
import vl_convert
vl_convert.vegalite_to_svg({"mark": "point", "data": {"values": []}})
try:
    from annotate.report import charts
except Exception as exc:
    charts, missing = None, f"{type(exc).__name__}: {exc}"
for line in sys.stdin.buffer:
    ask = json.loads(line)
    try:
        if "chart" not in ask:
            reply = {"svg": vl_convert.vegalite_to_svg(ask["spec"])}
        elif charts is None:
            reply = {"unavailable": missing}
        else:
            spec = charts.report_spec(ask["chart"], ask["args"])
            reply = {"spec": spec, "svg": spec and vl_convert.vegalite_to_svg(spec)}
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
        self._ahead: dict[str, Future[tuple[dict[str, Any], str] | None]] = {}
        self._ahead_lock = threading.Lock()
        self._waiter: ThreadPoolExecutor | None = None

    def start(self) -> None:
        """Start the helper (its engine and the charts' imports) now, without waiting for it."""
        with self._lock:
            self._ensure()

    def svg(self, spec: dict[str, Any]) -> str:
        found = self._answer({"spec": spec})
        if found is None:
            return _in_process(spec)
        return str(found["svg"])

    def prefetch(self, name: str, args: Sequence[Any]) -> None:
        """Ask for chart `name` now; a thread waits for the helper (the GIL is free while it
        does) and the next `chart` with the same name and arguments takes the result."""
        key = _chart_key(name, args)
        with self._ahead_lock:
            if key in self._ahead:
                return
            if self._waiter is None:
                self._waiter = ThreadPoolExecutor(1, thread_name_prefix="chart-helper")
            self._ahead[key] = self._waiter.submit(self._chart_now, name, list(args))

    def chart(self, name: str, args: Sequence[Any]) -> tuple[dict[str, Any], str] | None:
        """Chart `name` of `annotate.report.charts` (see `report_spec`) built from `args`:
        its Vega-Lite spec and SVG, or None when it has nothing to draw."""
        with self._ahead_lock:
            ahead = self._ahead.pop(_chart_key(name, args), None)
        if ahead is not None:
            return ahead.result()
        return self._chart_now(name, args)

    def _chart_now(self, name: str, args: Sequence[Any]) -> tuple[dict[str, Any], str] | None:
        found = self._answer({"chart": name, "args": list(args)})
        if found is None or "unavailable" in found:
            from annotate.report import charts

            spec = charts.report_spec(name, args)
            return None if spec is None else (spec, _in_process(spec))
        return None if found["spec"] is None else (found["spec"], str(found["svg"]))

    def close(self) -> None:
        with self._lock:
            if self._process is not None:
                _stop(self._process)
                self._process = None

    def _answer(self, ask: dict[str, Any]) -> dict[str, Any] | None:
        """The helper's reply to `ask`, or None when there is no helper (or it stopped: a new
        one is started next time). A spec vl-convert refuses raises ChartError."""
        message = json.dumps(ask, default=str).encode() + b"\n"
        with self._lock:
            process = self._ensure()
            reply = _ask(process, message) if process is not None else None
            if reply is None:
                if process is not None:
                    _stop(process)
                self._process = None
                return None
        found: dict[str, Any] = json.loads(reply)
        if "error" in found:
            raise ChartError(f"vl-convert could not render a chart: {found['error']}")
        return found

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if self._failed:
            return None
        path = os.pathsep.join(entry for entry in sys.path if entry)  # this process's modules
        try:
            self._process = subprocess.Popen(  # noqa: S603 - our own interpreter and code
                [sys.executable, "-c", _CHILD],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": path},
            )
        except OSError:
            self._failed = True
            return None
        return self._process


def _chart_key(name: str, args: Sequence[Any]) -> str:
    return json.dumps([name, list(args)], default=str, sort_keys=True)


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
