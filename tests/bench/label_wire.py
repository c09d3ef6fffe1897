"""The lightest real client of the Label page: Streamlit's own websocket protocol, no browser.

A reviewer's session as chromium opens it (the same /_stcore/stream websocket, the session
cookie, the rerun messages the frontend sends), minus the drawing: a press is the button's
trigger sent as the frontend sends it (the fragment's rerun), and it is answered when the run
has finished and the next claim's element has arrived. Twenty of these cost the machine
almost nothing, so a figure for many reviewers is the app's, not twenty browsers' on the
same two cores (each reviewer's browser runs on their own machine).
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

CLAIM = re.compile(r'class="annotate-claim" data-claim="([^"]*)"')
BARE = re.compile(r"count (\d+)")
FINISHED = (0, 3)  # script_finished: the run, or the fragment's run, finished


class WireSession:
    """One browser session of the app at `url`, signed in by `cookie` (name=value)."""

    def __init__(self, url: str, cookie: str = "", page: str = "") -> None:
        self.url, self.cookie, self.page = url, cookie, page
        self.page_hash = ""
        self.buttons: dict[str, tuple[str, str]] = {}  # id -> (label, fragment id)
        self.seen: list[str] = []  # claim keys (or bare counts) drawn, in order
        self.finished = 0
        self._changed = asyncio.Event()
        self._socket: Any = None
        self._reader: asyncio.Task | None = None

    async def open(self) -> None:
        import websockets

        address = self.url.replace("http://", "ws://") + "/_stcore/stream"
        headers = {"Origin": self.url, **({"Cookie": self.cookie} if self.cookie else {})}
        self._socket = await websockets.connect(
            address, subprotocols=["streamlit"], additional_headers=headers, max_size=None
        )
        self._reader = asyncio.create_task(self._read())
        await self._run(self._message(), lambda: bool(self.seen))

    async def close(self) -> None:
        await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    def _message(self, trigger: str | None = None, fragment: str = "") -> bytes:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        message = BackMsg()
        state = message.rerun_script
        state.query_string, state.page_name = "", self.page
        state.page_script_hash, state.fragment_id = self.page_hash, fragment
        if trigger is not None:
            widget = state.widget_states.widgets.add()
            widget.id, widget.trigger_value = trigger, True
        return message.SerializeToString()

    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        async for payload in self._socket:
            if isinstance(payload, bytes):
                self._heard(ForwardMsg.FromString(payload))

    def _heard(self, message: Any) -> None:
        kind = message.WhichOneof("type")
        if kind == "new_session":
            self.page_hash = message.new_session.page_script_hash
        elif kind == "script_finished" and message.script_finished in FINISHED:
            self.finished += 1
            self._changed.set()
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element":
            self._element(message.delta.new_element, message.delta.fragment_id)

    def _element(self, element: Any, fragment: str) -> None:
        which = element.WhichOneof("type")
        if which == "button":
            self.buttons[element.button.id] = (element.button.label, fragment)
        elif (
            which == "html"
            and (found := CLAIM.search(element.html.body))
            or which == "markdown"
            and (found := BARE.search(element.markdown.body))
        ):
            self.seen.append(found.group(1))

    async def _run(self, message: bytes, done, timeout: float = 120.0) -> None:
        finished = self.finished
        await self._socket.send(message)
        deadline = time.monotonic() + timeout
        while not (self.finished > finished and done()):
            self._changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from {self.url} in {timeout:.0f} s")
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                continue

    def button(self, key_part: str) -> tuple[str, str]:
        """The newest button whose widget id holds `key_part` (its key): (id, fragment id)."""
        for widget, (label, fragment) in reversed(self.buttons.items()):
            if key_part in widget or key_part == label:
                return widget, fragment
        raise LookupError(f"no button {key_part!r} on the page; buttons: {list(self.buttons)}")

    async def press(self, key_part: str) -> float:
        """Press the button (as its shortcut does): seconds until its run finished and a new
        claim (or count) arrived."""
        widget, fragment = self.button(key_part)
        before = len(self.seen)
        started = time.perf_counter()
        self.buttons.clear()
        await self._run(self._message(widget, fragment), lambda: len(self.seen) > before)
        return time.perf_counter() - started
