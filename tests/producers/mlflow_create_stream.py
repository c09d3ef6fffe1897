"""`python -m tests.producers.mlflow_create_stream OUTFILE`: the streamed kind of traffic made
with `messages.create(stream=True)` under MLflow's anthropic autolog (which patches
Messages.create, unlike `messages.stream()`), exported as OTLP JSON Lines like the others."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.fake_anthropic import FakeAnthropic, message, start, stop
from tests.producers.producers import SETUPS
from tests.producers.receiver import OtlpReceiver
from tests.producers.traffic import MAX_TOKENS, MODEL, STREAMED


def produce(path: Path) -> Path:
    fake = FakeAnthropic()
    thread = start(fake)
    try:
        with OtlpReceiver() as receiver:
            fake.reply(200, message(STREAMED.answer))
            app, finish = SETUPS["mlflow"](fake.client(max_retries=0), receiver.url)
            stream = app.client.messages.create(
                model=MODEL,
                max_tokens=MAX_TOKENS,
                system=STREAMED.system,
                messages=[{"role": "user", "content": STREAMED.question}],
                stream=True,
            )
            for _event in stream:  # the app reads the stream to its end
                pass
            finish()
            return receiver.write(path)
    finally:
        stop(fake, thread)


if __name__ == "__main__":
    print(produce(Path(sys.argv[1])))
