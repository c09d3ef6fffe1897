"""A local fake of the Anthropic Messages API, for the real SDK to talk HTTP to.

Each test queues replies (status, JSON body); the server records every request body.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def message(text: str, input_tokens: int = 120, output_tokens: int = 40) -> dict[str, Any]:
    return {
        "id": "msg_fake_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


class FakeAnthropic:
    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, Any]]] = []
        self.routes: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def reply(self, status: int, body: dict[str, Any], when: str | None = None) -> None:
        """Queue a reply; with `when`, only for requests whose messages contain that text."""
        if when is None:
            self.replies.append((status, body))
        else:
            self.routes.setdefault(when, []).append((status, body))

    def next_reply(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        content = json.dumps(request.get("messages", []))
        for needle, queued in self.routes.items():
            if queued and needle in content:
                return queued.pop(0)
        return self.replies.pop(0) if self.replies else (500, {"type": "error"})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length))
                fake.requests.append(request)
                status, body = fake.next_reply(request)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", f"req_fake_{len(fake.requests)}")
                self.send_header("retry-after-ms", "10")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(api_key="test-key", base_url=self.url, max_retries=3)


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
