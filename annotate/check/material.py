"""The answer to check as the judge's prompt takes it: request, context documents and response
(the shape annotate.judge.rubrics.prompt fences), and its claims (given, or split by sentence as
`annotate claims --extractor sentences` splits them). Bad input names its field and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from annotate.claims.sentences import ClaimSpan, split_sentences
from annotate.errors import UsageError

CONTEXT_SHAPES = 'a text, a list of texts, or a list of {"text": ..., "source": ...}'


class CheckInputError(UsageError):
    """One input to the check is not usable; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"field {field!r} {message}" if field else message)


def material_of(response: Any, context: Any, request: Any = None) -> dict[str, Any]:
    """{request, context: [{source, text}], response}, or CheckInputError naming the field."""
    if not isinstance(response, str):
        raise CheckInputError("response", f"must be text, got {_kind(response)}")
    if request is not None and not isinstance(request, str):
        raise CheckInputError("request", f"must be text or left out, got {_kind(request)}")
    documents = context_documents(context)
    if not any(doc["text"].strip() for doc in documents):
        raise CheckInputError(
            "context", "is empty: an answer cannot be checked against nothing; pass the "
            "documents the model was given"
        )  # fmt: skip
    return {"request": request, "context": documents, "response": response}


def context_documents(context: Any) -> list[dict[str, Any]]:
    items = [context] if isinstance(context, str | dict) else context
    if not isinstance(items, list | tuple):
        raise CheckInputError("context", f"must be {CONTEXT_SHAPES}, got {_kind(context)}")
    return [_document(item, position) for position, item in enumerate(items)]


def _document(item: Any, position: int) -> dict[str, Any]:
    if isinstance(item, str):
        return {"source": None, "text": item}
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        source = item.get("source")
        return {
            "source": source if isinstance(source, str) and source else None,
            **{"text": item["text"]},
        }
    raise CheckInputError(
        f"context[{position}]", f'must be a text or {{"text": ...}}, got {_kind(item)}'
    )


def claim_spans(response: str, claims: Sequence[str] | None) -> list[ClaimSpan]:
    """The given claims (located in the response where they are quoted), else its sentences."""
    if claims is None:
        return split_sentences(response)
    if not isinstance(claims, list | tuple) or not all(
        isinstance(c, str) and c.strip() for c in claims
    ):
        raise CheckInputError(
            "claims",
            "must be a list of non-empty texts, or left out to split the response by sentence",
        )
    spans = []
    for text in claims:
        start = response.find(text)
        spans.append(
            ClaimSpan(text, start, start + len(text)) if start >= 0 else ClaimSpan(text, None, None)
        )
    return spans


def _kind(value: Any) -> str:
    return "nothing (null)" if value is None else type(value).__name__
