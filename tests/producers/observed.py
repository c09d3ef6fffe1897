"""The support bot as Langfuse and MLflow users write it: their own observations around the calls.

Owns the two `App`s whose traces come from the libraries' manual APIs (a root observation per
question, a retriever holding the documents, a tool observation, Langfuse's generation around
each Messages call). Import only after the library's settings are in the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.producers.traffic import TOOL_NAME, App, Expected, Turn


def content_of(message: Any) -> Any:
    """A response as Langfuse's docs record it: the text, or the blocks when it calls a tool."""
    if any(block.type != "text" for block in message.content):
        return [block.model_dump(exclude_none=True) for block in message.content]
    return "".join(block.text for block in message.content)


def documents(texts: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"id": f"policy-{n}", "content": text} for n, text in enumerate(texts, 1)]


class ObservedTurn(Turn):
    def __init__(self, record: Callable[[str], object]) -> None:
        self.record = record

    def answered(self, text: str) -> None:
        self.record(text)


class LangfuseApp(App):
    """Langfuse 5: a span per question, a retriever, a generation per call, `@observe` tool."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        from langfuse import Langfuse, observe

        self.langfuse = Langfuse()

        @observe(name=TOOL_NAME, as_type="tool")
        def lookup_order(order_id: str) -> str:
            return App.run_tool(self, TOOL_NAME, {"order_id": order_id})

        self._lookup_order = lookup_order

    def finish(self) -> None:
        self.langfuse.flush()
        self.langfuse.shutdown()

    @contextmanager
    def turn(self, expected: Expected) -> Iterator[Turn]:
        with self.langfuse.start_as_current_observation(
            name="support-bot.answer", as_type="agent", input={"question": expected.question}
        ) as root:
            yield ObservedTurn(lambda text: root.update(output=text))

    def retrieved(self, question: str, found: tuple[str, ...]) -> None:
        with self.langfuse.start_as_current_observation(
            name="search_policies", as_type="retriever", input={"query": question}
        ) as retriever:
            retriever.update(output=documents(found))

    def create(self, **params: Any) -> Any:
        with self._generation(params) as generation:
            message = self.client.messages.create(**params)
            generation.update(output=content_of(message), usage_details=usage(message))
        return message

    def stream(self, **params: Any) -> str:
        with self._generation(params) as generation, self.client.messages.stream(**params) as s:
            text = "".join(s.text_stream)
            generation.update(output=text, usage_details=usage(s.get_final_message()))
        return text

    def run_tool(self, name: str, arguments: dict[str, Any]) -> str:
        return self._lookup_order(**arguments)

    def _generation(self, params: dict[str, Any]) -> Any:
        system = [{"role": "system", "content": params["system"]}] if "system" in params else []
        return self.langfuse.start_as_current_observation(
            name="anthropic.messages",
            as_type="generation",
            model=params["model"],
            model_parameters={"max_tokens": params["max_tokens"]},
            input=[*system, *params["messages"]],
        )


def usage(message: Any) -> dict[str, int]:
    return {"input": message.usage.input_tokens, "output": message.usage.output_tokens}


class MlflowApp(App):
    """MLflow 3: `mlflow.anthropic.autolog()`, a CHAIN span per question, RETRIEVER and TOOL spans."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        import mlflow

        self.mlflow = mlflow
        mlflow.anthropic.autolog()

    def finish(self) -> None:
        from opentelemetry import trace

        provider = trace.get_tracer_provider()
        provider.force_flush()  # type: ignore[attr-defined]
        provider.shutdown()  # type: ignore[attr-defined]

    @contextmanager
    def turn(self, expected: Expected) -> Iterator[Turn]:
        with self.mlflow.start_span(name="answer_question", span_type="CHAIN") as root:
            root.set_inputs({"question": expected.question})
            yield ObservedTurn(root.set_outputs)

    def retrieved(self, question: str, found: tuple[str, ...]) -> None:
        with self.mlflow.start_span(name="search_policies", span_type="RETRIEVER") as span:
            span.set_inputs({"query": question})
            # MLflow's retriever schema: a list of Documents (page_content, metadata, id)
            span.set_outputs(
                [
                    {"page_content": d["content"], "metadata": {"source": d["id"]}, "id": d["id"]}
                    for d in documents(found)
                ]
            )

    def run_tool(self, name: str, arguments: dict[str, Any]) -> str:
        with self.mlflow.start_span(name=name, span_type="TOOL") as span:
            span.set_inputs(arguments)
            result = super().run_tool(name, arguments)
            span.set_outputs(result)
        return result
