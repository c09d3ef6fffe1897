"""A local fake of the Anthropic Messages API that the real SDK talks HTTP to.

Tests queue replies (status, JSON body), optionally only for requests whose messages contain
some text; the server records every request body and headers. A request with nothing queued
gets a 500, so a test that forgot a reply fails loudly instead of hanging.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from annotate.llm import MAX_RETRIES


def message(text: str, input_tokens: int = 120, output_tokens: int = 40) -> dict[str, Any]:
    """A Messages API response body with one text block."""
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


def error(status_type: str, text: str = "fake error") -> dict[str, Any]:
    return {"type": "error", "error": {"type": status_type, "message": text}}


class FakeAnthropic:
    def __init__(self) -> None:
        self.replies: list[tuple[int, dict[str, Any]]] = []
        self.routes: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def reply(self, status: int, body: dict[str, Any], when: str | None = None) -> None:
        """Queue a reply; with `when`, only for requests whose messages contain that text."""
        if when is None:
            self.replies.append((status, body))
        else:
            self.routes.setdefault(when, []).append((status, body))

    def requests_about(self, text: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if text in json.dumps(r.get("messages", []))]

    def _next_reply(self, request: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        content = json.dumps(request.get("messages", []))
        for needle, queued in self.routes.items():
            if queued and needle in content:
                return queued.pop(0)
        return self.replies.pop(0) if self.replies else (500, error("api_error", "nothing queued"))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("content-length", 0))
                request = json.loads(self.rfile.read(length))
                with fake._lock:
                    fake.requests.append(request)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    number = len(fake.requests)
                    status, body = (
                        fake._next_reply(request)
                        if self.path == "/v1/messages"
                        else (404, error("not_found_error", self.path))
                    )
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", f"req_fake_{number}")
                self.send_header("retry-after-ms", "10")  # keep the SDK's backoff short
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(api_key="test-key", base_url=self.url, max_retries=MAX_RETRIES)


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    thread = threading.Thread(target=fake.server.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
    thread.join(timeout=5)
