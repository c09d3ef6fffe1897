"""Anthropic calls for claim extraction and the judge: the client, fenced text, one recorded call.

Owns no prompt of its own. Every call lands in llm_calls (model, prompt version, request id,
tokens, raw answer, error); an answer that does not parse is a recorded error, never a guess.
Retries are the SDK's (max_retries): rate limits, overload, 5xx, timeouts and connection
errors; a parse error or any other 4xx is not retried.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from annotate.errors import AnnotateError, UsageError
from annotate.store import Store
from annotate.store.claims import record_llm_call

MAX_RETRIES = 3
TIMEOUT_SECONDS = 120.0
T = TypeVar("T")


class LLMError(AnnotateError):
    """A call failed after the SDK's retries, or its answer did not parse; it is recorded."""


class MissingKeyError(UsageError):
    """No ANTHROPIC_API_KEY: everything but new LLM calls still works."""


@dataclass(frozen=True)
class LLMCall:
    """What a call is for, as recorded beside its outcome."""

    purpose: str  # claim_extraction | judge
    model: str
    prompt_version: str
    trace_id: str | None = None


def has_api_key() -> bool:
    return bool(os.environ.get("ANTHROPIC_API_KEY", "").strip())


def make_client(what: str = "this", fix: str = "") -> Any:
    """The SDK client from ANTHROPIC_API_KEY and, if set, ANTHROPIC_BASE_URL."""
    if not has_api_key():
        raise MissingKeyError(f"{what} needs ANTHROPIC_API_KEY; set it{fix}")
    import anthropic  # only when a call is about to be made: the CLI starts faster

    return anthropic.Anthropic(
        api_key=os.environ["ANTHROPIC_API_KEY"].strip(),
        base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
        max_retries=MAX_RETRIES,
        timeout=TIMEOUT_SECONDS,
    )


# "<" and the brackets a model may read as one: fullwidth, small, single angle, math angle
_OPENERS = "<\uff1c\ufe64\u2039\u3008\u27e8"
_SLASHES = "/\uff0f\u2215"


def fence(blocks: Sequence[tuple[str, str]], tags: Iterable[str] = ()) -> str:
    """Untrusted texts, each inside its <tag>...</tag>, for every prompt that holds any.

    In every block, every tag the prompt uses (the blocks' tags and `tags`, such as those
    the system prompt names) is defused, in any spelling a model might still read as the
    tag: any case, spaces, "_" or "-" inside, a slash or not, look-alike brackets. Its
    opening bracket becomes "&lt;", so each block has exactly one opening and one closing tag.
    """
    pattern = _tag_pattern({tag for tag, _ in blocks} | set(tags))
    return "\n\n".join(f"<{tag}>\n{pattern.sub(_defuse, text)}\n</{tag}>" for tag, text in blocks)


def _tag_pattern(tags: set[str]) -> re.Pattern[str]:
    names = "|".join(r"[\s_-]*".join(re.escape(ch) for ch in tag) for tag in sorted(tags))
    return re.compile(
        rf"[{_OPENERS}](?=\s*[{_SLASHES}]?\s*(?:{names}))", re.IGNORECASE | re.UNICODE
    )


def _defuse(match: re.Match[str]) -> str:
    return "&lt;"


def ask(
    store: Store,
    client: Any,
    call: LLMCall,
    system: str,
    prompt: str,
    parse: Callable[[str], T],
    max_tokens: int = 4096,
) -> T:
    """One Messages API call, recorded once whatever happens; `parse` raises ValueError."""
    import anthropic

    record: dict[str, Any] = {
        "purpose": call.purpose,
        "trace_id": call.trace_id,
        "model": call.model,
        "prompt_version": call.prompt_version,
    }
    try:
        message = client.messages.create(
            model=call.model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": prompt}],
        )
    except anthropic.AnthropicError as exc:  # the SDK already retried what is worth retrying
        record["request_id"] = getattr(exc, "request_id", None)
        record["error"] = f"{type(exc).__name__}: {exc}"
        record_llm_call(store, record)
        raise LLMError(f"the {call.purpose} call failed: {record['error']}") from exc
    raw = "".join(block.text for block in message.content if block.type == "text")
    record.update(
        request_id=message._request_id,
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
        raw_response=raw,
    )
    try:
        result = parse(raw)
    except ValueError as exc:
        cut = " (the answer hit max_tokens)" if message.stop_reason == "max_tokens" else ""
        record["error"] = f"the answer did not parse: {exc}{cut}"
        record_llm_call(store, record)
        raise LLMError(f"the {call.purpose} answer did not parse: {exc}{cut}") from None
    record_llm_call(store, record)
    return result
