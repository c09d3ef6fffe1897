"""Where chromium's time goes in a key press (bench_label_latency): the page's main thread
from chromium's performance trace, split as DevTools splits it (scripting, style and layout,
paint), and the websocket messages the press brought, the Label page beside the bare app."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute"]
STYLE_LAYOUT = {"Layout", "UpdateLayoutTree", "RecalculateStyles", "UpdateLayerTree", "HitTest"}
PAINT = {"Paint", "PrePaint", "Layerize", "Commit", "PaintImage", "UpdateLayer", "RasterTask"}
SCRIPTING = {
    "FunctionCall",
    "EvaluateScript",
    "TimerFire",
    "EventDispatch",
    "RunMicrotasks",
    "FireAnimationFrame",
    "FireIdleCallback",
    "HandlePostMessage",
    "MajorGC",
    "MinorGC",
    "ParseHTML",
    "ParseAuthorStyleSheet",
}


def kind(name: str) -> str:
    if name in SCRIPTING or name.lower().startswith("v8"):
        return "scripting"
    if name in STYLE_LAYOUT:
        return "style and layout"
    return "paint" if name in PAINT else "other"


def self_times(events: list[dict[str, Any]]) -> Counter:
    """Microseconds of each event name on one thread, less the events nested in it."""
    spans = sorted(
        (e for e in events if e.get("ph") == "X" and "dur" in e),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    own, stack = Counter(), []
    for event in spans:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= event["ts"]:
            stack.pop()
        if stack:
            own[stack[-1]["name"]] -= event["dur"]
        own[event["name"]] += event["dur"]
        stack.append(event)
    return own


def main_thread(raw: bytes, presses: int) -> dict[str, float]:
    """Milliseconds per press on the busiest renderer main thread of a trace: its busy time
    and that time by kind (the traced page's renderer; the other pages are idle)."""
    events = json.loads(raw)
    events = events["traceEvents"] if isinstance(events, dict) else events
    mains = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("ph") == "M" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    threads = {key: [e for e in events if (e.get("pid"), e.get("tid")) == key] for key in mains}
    own = max((self_times(t) for t in threads.values()), key=lambda c: sum(c.values()))
    split = Counter()
    for name, micros in own.items():
        split[kind(name)] += micros
    figures = {name: split[name] / 1000 / presses for name in sorted(split)}
    return {"busy": sum(split.values()) / 1000 / presses, **figures}


class Frames:
    """Counts the websocket messages a page receives (attach before the page opens)."""

    def __init__(self) -> None:
        self.count = 0
        self.size = 0

    def hook(self, page: Any) -> None:
        page.on("websocket", lambda socket: socket.on("framereceived", self.heard))

    def heard(self, payload: bytes | str) -> None:
        self.count += 1
        self.size += len(payload)

    def take(self) -> tuple[int, int]:
        got = (self.count, self.size)
        self.count = self.size = 0
        return got


async def traced(browser, page, press, frames: Frames, count: int) -> dict[str, Any]:
    """`count` presses on `page` under chromium's tracing: main thread and messages per press."""
    frames.take()
    await browser.start_tracing(page=page, categories=CATEGORIES)
    times = [await press(page) for _ in range(count)]
    figures = main_thread(await browser.stop_tracing(), count)
    messages, size = frames.take()
    return {**figures, "messages": messages / count, "bytes": size / count, "times": times}


def describe(figures: dict[str, Any]) -> str:
    kinds = ", ".join(
        f"{name} {figures[name]:.0f}"
        for name in ("scripting", "style and layout", "paint", "other")
        if name in figures
    )
    return (
        f"main thread busy {figures['busy']:.0f} ms ({kinds}), "
        f"{figures['messages']:.0f} messages of {figures['bytes'] / 1000:.1f} kB"
    )
