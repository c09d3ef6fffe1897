"""The four kinds of RAG/agent traffic a refund-policy support bot sends, and their ground truth.

Owns the texts, the fake server's replies and the SDK calls; each `Expected` is what an import of
the traces must find. It must not know any tracing library: producers hook in through `App`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

MODEL = "claude-haiku-4-5"
MAX_TOKENS = 512

REFUND_POLICY = (
    "Refund policy (revised 1 March 2026). Unopened items may be returned within 30 days of "
    "delivery for a full refund to the original payment method. Opened items are refunded at "
    "80% of the price unless they arrived damaged. Refunds are issued within 5 business days "
    "of the warehouse receiving the return."
)
SHIPPING_POLICY = (
    "Return shipping. Customers in the EU and UK get a prepaid return label by email. Customers "
    "elsewhere pay return shipping themselves, except for damaged or wrong items, for which we "
    "reimburse the postage on presentation of a receipt."
)
WARRANTY_POLICY = (
    "Warranty. Every Kettleworks appliance has a 2-year warranty against manufacturing defects. "
    "A warranty claim needs the order number and a photo of the defect; we repair or replace "
    "the appliance, and refund it only when neither is possible."
)
GIFT_CARD_POLICY = (
    "Gift cards. Orders paid with a gift card are refunded to a new gift card, never to cash. "
    "Gift cards themselves cannot be returned or exchanged once activated."
)
LOYALTY_POLICY = (
    "Loyalty points. Points earned on an order are removed when the order is refunded. Points "
    "spent on an order are returned to the account within 24 hours of the refund."
)
ORDER_RECORD = json.dumps(
    {
        "order_id": "KW-20931",
        "status": "delivered",
        "delivered_on": "2026-03-18",
        "items": [{"sku": "KETTLE-2L-STEEL", "name": "Steel kettle 2 L", "price_eur": 64.0}],
        "payment_method": "visa ending 4417",
        "return_requested": False,
    }
)


@dataclass(frozen=True)
class Expected:
    """What the model was asked and given, and what it answered, as an importer must find it."""

    kind: str
    question: str  # the user's question exactly as typed
    answer: str  # the final text answer
    contexts: tuple[str, ...]  # the exact source texts the model was given
    system: str | None = None  # the system prompt, when there is one


PASTED = Expected(
    kind="pasted",
    question="I opened the blender I bought last week but never used it. How much of a refund do I get, and who pays for the return postage? I live in Norway.",
    answer="Because the blender has been opened, you would be refunded 80% of its price, within 5 business days of our warehouse receiving it. As you live in Norway, outside the EU and UK, you pay the return postage yourself unless the blender arrived damaged or was the wrong item.",
    contexts=(REFUND_POLICY, SHIPPING_POLICY),
)
DOCUMENT_BLOCKS = Expected(
    kind="document_blocks",
    question="My toaster stopped heating after 14 months. Can I get my money back?",
    answer="Your toaster is still covered by the 2-year warranty against manufacturing defects. Send us the order number and a photo of the defect and we will repair or replace it; a refund is only given if neither repair nor replacement is possible.",
    contexts=(WARRANTY_POLICY, REFUND_POLICY),
)
TOOL_CALL = Expected(
    kind="tool_call",
    question="Can I still return order KW-20931? The kettle is unopened.",
    answer="Yes. Order KW-20931 (the Steel kettle 2 L) was delivered on 18 March 2026 and is unopened, so you can return it within 30 days of delivery for a full refund of EUR 64.00 to your Visa ending 4417.",
    contexts=(ORDER_RECORD,),
)
STREAMED = Expected(
    kind="streamed",
    question="I paid for my order with a gift card and 500 loyalty points. What happens to both if I return it?",
    answer="The amount you paid by gift card is refunded to a new gift card, not to cash. The 500 loyalty points you spent are returned to your account within 24 hours of the refund, and any points the order earned you are removed.",
    contexts=(GIFT_CARD_POLICY, LOYALTY_POLICY),
    system=(
        "You are Kettleworks' customer support assistant. Answer only from the policy documents "
        "below; if they do not answer the question, say so.\n\n"
        f'<document title="Gift cards">\n{GIFT_CARD_POLICY}\n</document>\n\n'
        f'<document title="Loyalty points">\n{LOYALTY_POLICY}\n</document>'
    ),
)
KINDS: dict[str, Expected] = {e.kind: e for e in (PASTED, DOCUMENT_BLOCKS, TOOL_CALL, STREAMED)}

TOOL_PREAMBLE = "Let me look that up."
TOOL_NAME = "lookup_order"
TOOL_USE_ID = "toolu_01KW20931lookup"
TOOL = {
    "name": TOOL_NAME,
    "description": "Look up an order by its number: status, delivery date, items, payment.",
    "input_schema": {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    },
}
PASTED_PROMPT = (
    "Answer the customer's question using only these documents.\n\n"
    f"<document>\n{REFUND_POLICY}\n</document>\n\n<document>\n{SHIPPING_POLICY}\n</document>\n\n"
    f"{PASTED.question}"
)


def reply(text_or_blocks: str | list[dict[str, Any]], stop: str = "end_turn", n: int = 1) -> dict:
    """A Messages API response body (the fake server's reply)."""
    blocks = text_or_blocks
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    return {
        "id": f"msg_01KettleworksFake{n:04d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 310 + 17 * n, "output_tokens": 42 + n},
    }


def queue_replies(fake: Any) -> None:
    """Queue each kind's replies on the fake server, routed by text only its requests have."""
    fake.reply(200, reply(PASTED.answer, n=1), when="How much of a refund")
    fake.reply(200, reply(DOCUMENT_BLOCKS.answer, n=2), when="My toaster stopped")
    tool_use = {"type": "tool_use", "id": TOOL_USE_ID, "name": TOOL_NAME}
    first = [
        {"type": "text", "text": TOOL_PREAMBLE},
        {**tool_use, "input": {"order_id": "KW-20931"}},
    ]
    # the second call also contains the question, so its route (the tool result) is queued first
    fake.reply(200, reply(TOOL_CALL.answer, n=4), when=TOOL_USE_ID)
    fake.reply(200, reply(first, stop="tool_use", n=3), when="Can I still return")
    fake.reply(200, reply(STREAMED.answer, n=5), when="gift card and 500")


class Turn:
    """The handle of one question being answered; apps with a root observation record the answer."""

    def answered(self, text: str) -> None:
        """The bot's final answer to the question."""


class App:
    """The support bot's own structure: where it would open spans around retrieval and tools.

    The default opens one plain OpenTelemetry span around the tool loop (so its two calls share
    a trace) and nothing else; producers with their own observations override the hooks.
    """

    def __init__(self, client: Any) -> None:
        self.client = client

    @contextmanager
    def turn(self, expected: Expected) -> Iterator[Turn]:
        """The whole handling of one customer question."""
        if expected.kind != "tool_call":
            yield Turn()
            return
        from opentelemetry import trace

        with trace.get_tracer("kettleworks.support_bot").start_as_current_span("support_agent.run"):
            yield Turn()

    def retrieved(self, question: str, documents: tuple[str, ...]) -> None:
        """The retriever found `documents` for `question`."""

    def create(self, **params: Any) -> Any:
        """One Messages call."""
        return self.client.messages.create(**params)

    def stream(self, **params: Any) -> str:
        """One streamed Messages call; returns its text."""
        with self.client.messages.stream(**params) as stream:
            return "".join(stream.text_stream)

    def run_tool(self, name: str, arguments: dict[str, Any]) -> str:
        """The app's tool: the order database."""
        assert name == TOOL_NAME and arguments == {"order_id": "KW-20931"}, (name, arguments)
        return ORDER_RECORD


def text_of(message: Any) -> str:
    """A response's text, its blocks joined as a chat UI shows them."""
    return "".join(block.text for block in message.content if block.type == "text")


def ask_pasted(app: App) -> None:
    with app.turn(PASTED) as turn:
        app.retrieved(PASTED.question, PASTED.contexts)
        messages = [{"role": "user", "content": PASTED_PROMPT}]
        turn.answered(text_of(app.create(model=MODEL, max_tokens=MAX_TOKENS, messages=messages)))


def ask_document_blocks(app: App) -> None:
    with app.turn(DOCUMENT_BLOCKS) as turn:
        app.retrieved(DOCUMENT_BLOCKS.question, DOCUMENT_BLOCKS.contexts)
        titles = ("Warranty", "Refund policy")
        documents = [
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": text},
                "title": title,
            }
            for title, text in zip(titles, DOCUMENT_BLOCKS.contexts, strict=True)
        ]
        content = [*documents, {"type": "text", "text": DOCUMENT_BLOCKS.question}]
        messages = [{"role": "user", "content": content}]
        turn.answered(text_of(app.create(model=MODEL, max_tokens=MAX_TOKENS, messages=messages)))


def ask_tool_call(app: App) -> None:
    with app.turn(TOOL_CALL) as turn:
        messages: list[dict[str, Any]] = [{"role": "user", "content": TOOL_CALL.question}]
        first = app.create(model=MODEL, max_tokens=MAX_TOKENS, tools=[TOOL], messages=messages)
        use = next(block for block in first.content if block.type == "tool_use")
        result = app.run_tool(use.name, use.input)
        # as JSON-able dicts: OpenLLMetry's events mode cannot encode the SDK's block objects (as
        # Anthropic's docs pass them) and its log exporter then drops the whole batch
        assistant = [block.to_dict() for block in first.content]
        messages.append({"role": "assistant", "content": assistant})
        tool_result = {"type": "tool_result", "tool_use_id": use.id, "content": result}
        messages.append({"role": "user", "content": [tool_result]})
        final = app.create(model=MODEL, max_tokens=MAX_TOKENS, tools=[TOOL], messages=messages)
        turn.answered(text_of(final))


def ask_streamed(app: App) -> None:
    with app.turn(STREAMED) as turn:
        app.retrieved(STREAMED.question, STREAMED.contexts)
        messages = [{"role": "user", "content": STREAMED.question}]
        text = app.stream(
            model=MODEL, max_tokens=MAX_TOKENS, system=STREAMED.system, messages=messages
        )
        assert text == STREAMED.answer, text
        turn.answered(text)


def ask_all(app: App) -> None:
    """Send the four kinds, one trace each, in a fixed order."""
    for ask in (ask_pasted, ask_document_blocks, ask_tool_call, ask_streamed):
        ask(app)
