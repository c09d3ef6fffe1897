"""Anthropic calls for claim extraction and the judge: the client, fenced text (made in
traces/fences.py, used as llm.fence), one recorded call.

Owns no prompt of its own. Every call lands in llm_calls (model, prompt version, request id,
tokens, raw answer, error); an answer that does not parse is a recorded error, never a guess.
Retries: `ask` leaves them to the SDK (max_retries); `ask_structured` (the judge) retries
itself, so each call records its attempts: rate limits (429), overload (529), other 5xx,
timeouts and connection errors, waiting what retry-after says, else an exponential backoff.
A parse error or any other 4xx is never retried. Message Batches: submit, poll, collect.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from annotate.errors import AnnotateError, UsageError
from annotate.traces.fences import defuse, fence, strip_controls  # noqa: F401 - used as llm.fence

if TYPE_CHECKING:  # the store is imported where a call is recorded: the runtime check has none
    from annotate.store import Store

MAX_RETRIES = 3
TIMEOUT_SECONDS = 120.0
T = TypeVar("T")
PRICES_KEY = "judge_prices"  # a setting; the name is kept from when only the judge had prices
# US dollars per million tokens (input, output): a setting, this is its default
DEFAULT_PRICES = {
    "claude-haiku-4-5": [1.0, 5.0],
    "claude-sonnet-4-5": [3.0, 15.0],
    "claude-opus-4-5": [5.0, 25.0],
}


def prices(store: Store) -> dict[str, list[float]]:
    """Model -> [input, output] US dollars per million tokens: the setting over the defaults."""
    import json

    from annotate.store.assignments import get_setting

    saved = get_setting(store, PRICES_KEY)
    return {**DEFAULT_PRICES, **(json.loads(saved) if saved else {})}


class LLMError(AnnotateError):
    """A call failed after the SDK's retries, or its answer did not parse; it is recorded."""

    def __init__(self, message: str, call_id: int | None = None) -> None:
        super().__init__(message)
        self.call_id = call_id


class MissingKeyError(UsageError):
    """No ANTHROPIC_API_KEY: everything but new LLM calls still works."""


@dataclass(frozen=True)
class LLMCall:
    """What a call is for, as recorded beside its outcome."""

    purpose: str  # claim_extraction | judge
    model: str
    prompt_version: str
    trace_id: str | None = None
    sample: str | None = None  # what the call's spend is totalled under (annotate spend)
    rubric_version: int | None = None


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

    record = _record_base(call)
    try:
        message = client.messages.create(
            model=call.model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": prompt}],
        )
    except (anthropic.AnthropicError, ValueError) as exc:  # the SDK retried what is worth it
        record["request_id"] = getattr(exc, "request_id", None)
        record["error"] = _failure(exc)
        _record(store, record)
        raise LLMError(f"the {call.purpose} call failed: {record['error']}") from exc
    return save_answer(store, call, _answer(record, message, parse, call))[0]


# --- structured calls with our own retries (the judge) ----------------------------------------

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class Retry:
    """How a structured call retries: attempts in all, per-attempt timeout, the sleeper."""

    attempts: int = MAX_RETRIES + 1
    timeout: float = TIMEOUT_SECONDS
    base_wait: float = 0.5
    sleep: Callable[[float], None] = time.sleep


def is_retryable(exc: BaseException) -> bool:
    """Rate limits, overload, 5xx, timeouts and connection errors; never a parse or 4xx error."""
    import anthropic

    if isinstance(exc, anthropic.APIConnectionError):  # includes APITimeoutError
        return True
    return isinstance(exc, anthropic.APIStatusError) and exc.status_code in RETRY_STATUSES


def retry_wait(exc: BaseException, attempt: int, base: float = 0.5) -> float:
    """What the server asked for (retry-after-ms, else retry-after in seconds), else backoff."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name) or "") * scale
        except (TypeError, ValueError):
            continue
        if 0 <= value <= MAX_WAIT_SECONDS:
            return value
    return min(base * 2**attempt, 8.0) * (0.75 + random.random() / 4)


def cached(text: str) -> dict[str, Any]:
    """A text block marked for prompt caching (the rubric, a trace's context prefix)."""
    return {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}


def message_params(
    call: LLMCall,
    system: Sequence[dict[str, Any]],
    content: Sequence[dict[str, Any]],
    schema: dict[str, Any],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The Messages API parameters of one structured call (also a batch request's params)."""
    params: dict[str, Any] = {
        "model": call.model,
        "max_tokens": int(settings.get("max_tokens", 1024)),
        "system": list(system),
        "messages": [{"role": "user", "content": list(content)}],
        "output_config": {"format": {"type": "json_schema", "schema": schema}},
    }
    return params


@dataclass
class Answer:
    """A structured call's outcome before it is stored: the parsed result or an error."""

    record: dict[str, Any]
    result: Any = None
    error: str | None = None


def ask_structured(
    store: Store,
    client: Any,
    call: LLMCall,
    params: dict[str, Any],
    parse: Callable[[str], T],
    retry: Retry | None = None,
) -> tuple[T, int]:
    """One structured call with retries, recorded once; (parsed answer, llm_calls id).

    Raises LLMError (with the recorded call's id) when it failed or did not parse.
    """
    return save_answer(store, call, call_structured(client, call, params, parse, retry))


def call_structured(
    client: Any,
    call: LLMCall,
    params: dict[str, Any],
    parse: Callable[[str], Any],
    retry: Retry | None = None,
) -> Answer:
    """The call and its retries, touching no store (safe in a worker thread); store the
    Answer with save_answer, so many calls can be recorded in one transaction."""
    retry = retry or Retry()
    sender = client.with_options(max_retries=0, timeout=retry.timeout)
    record = _record_base(call)
    for attempt in range(retry.attempts):
        record["attempts"] = attempt + 1
        try:
            message = sender.messages.create(**params)
            break
        except Exception as exc:
            if not _is_sdk_error(exc) and not isinstance(exc, ValueError):
                raise  # a ValueError here is a body that is not JSON (cut short): recorded
            if is_retryable(exc) and attempt + 1 < retry.attempts:
                retry.sleep(retry_wait(exc, attempt, retry.base_wait))
                continue
            record["request_id"] = getattr(exc, "request_id", None)
            record["error"] = _failure(exc)
            return Answer(record, error=f"the {call.purpose} call failed: {record['error']}")
    return _answer(record, message, parse, call)


def save_answer(store: Store, call: LLMCall, answer: Answer) -> tuple[Any, int]:
    """Record the call; (result, id), or LLMError (with the id) when it failed."""
    call_id = _record(store, answer.record)
    if answer.error is not None:
        raise LLMError(answer.error, call_id)
    return answer.result, call_id


def _failure(exc: BaseException) -> str:
    if isinstance(exc, ValueError) and not _is_sdk_error(exc):
        return f"the response body is not JSON, perhaps cut short ({exc})"
    return f"{type(exc).__name__}: {exc}"


def _is_sdk_error(exc: BaseException) -> bool:
    import anthropic

    return isinstance(exc, anthropic.AnthropicError)


def _record_base(call: LLMCall) -> dict[str, Any]:
    return {
        "purpose": call.purpose,
        "trace_id": call.trace_id,
        "model": call.model,
        "prompt_version": call.prompt_version,
        "sample": call.sample,
        "rubric_version": call.rubric_version,
    }


def _answer(
    record: dict[str, Any], message: Any, parse: Callable[[str], Any], call: LLMCall
) -> Answer:
    try:
        raw = "".join(block.text for block in message.content if block.type == "text")
        usage = message.usage
        usage.input_tokens, usage.output_tokens  # noqa: B018 - present, or not a message
    except (AttributeError, TypeError) as exc:  # a 200 whose body is no Messages answer
        record["error"] = f"the response is not a Messages answer ({exc})"
        return Answer(record, error=f"the {call.purpose} call failed: {record['error']}")
    record.update(
        request_id=getattr(message, "_request_id", None) or record.get("request_id"),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", None),
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", None),
        raw_response=raw,
    )
    try:
        return Answer(record, result=parse(raw))
    except ValueError as exc:
        cut = " (the answer hit max_tokens)" if message.stop_reason == "max_tokens" else ""
        record["error"] = f"the answer did not parse: {exc}{cut}"
        return Answer(record, error=f"the {call.purpose} answer did not parse: {exc}{cut}")


# --- Message Batches ---------------------------------------------------------------------------


def submit_batch(client: Any, requests: Sequence[dict[str, Any]]) -> str:
    """Submit {custom_id, params} requests as one Message Batch; its id."""
    batch = client.messages.batches.create(requests=list(requests))
    return str(batch.id)


def batch_status(client: Any, batch_id: str) -> dict[str, Any]:
    batch = client.messages.batches.retrieve(batch_id)
    counts = batch.request_counts
    return {
        "status": batch.processing_status,
        "processing": counts.processing,
        "succeeded": counts.succeeded,
        "errored": counts.errored + counts.expired + counts.canceled,
    }


def collect_batch(
    store: Store,
    client: Any,
    batch_id: str,
    calls: dict[str, LLMCall],
    parsers: dict[str, Callable[[str], T]],
) -> Iterable[tuple[str, T | None, LLMError | None, int]]:
    """Each result of an ended batch, recorded: (custom_id, parsed or None, error or None, id)."""
    seen: set[str] = set()
    for item in client.messages.batches.results(batch_id):
        call = calls.get(item.custom_id)
        if call is None or item.custom_id in seen:
            continue
        seen.add(item.custom_id)
        record = {**_record_base(call), "batch_id": batch_id, "attempts": 1}
        if item.result.type != "succeeded":
            error = f"batch request {item.result.type}: {getattr(item.result, 'error', None)}"
            yield item.custom_id, None, *_batch_failure(store, record, error)
            continue
        answer = _answer(record, item.result.message, parsers[item.custom_id], call)
        try:
            result, call_id = save_answer(store, call, answer)
        except LLMError as exc:
            yield item.custom_id, None, exc, exc.call_id or 0
            continue
        yield item.custom_id, result, None, call_id
    for custom_id in sorted(calls.keys() - seen):  # the API owes a result for every request
        record = {**_record_base(calls[custom_id]), "batch_id": batch_id, "attempts": 1}
        yield custom_id, None, *_batch_failure(store, record, "batch request with no result")


def _batch_failure(store: Store, record: dict[str, Any], error: str) -> tuple[LLMError, int]:
    record["error"] = error
    call_id = _record(store, record)
    return LLMError(error, call_id), call_id


def _record(store: Store, record: dict[str, Any]) -> int:
    from annotate.store.claims import record_llm_call

    return record_llm_call(store, record)
