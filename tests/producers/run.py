"""`python -m tests.producers.run PRODUCER OUTDIR`: one producer's traces as OUTDIR/PRODUCER.jsonl.

Owns one producer's run in a process of its own (instrumentors patch the anthropic SDK for the
whole process): the fake Messages API, the OTLP receiver, the traffic, the flush, the file.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.fake_anthropic import FakeAnthropic, start, stop
from tests.producers.producers import SETUPS
from tests.producers.receiver import OtlpReceiver
from tests.producers.traffic import ask_all, queue_replies


def produce(producer: str, outdir: Path) -> Path:
    """Run the four kinds of traffic under `producer`; the JSON Lines file its exports made."""
    fake = FakeAnthropic()
    thread = start(fake)
    try:
        with OtlpReceiver() as receiver:
            queue_replies(fake)
            app, finish = SETUPS[producer](fake.client(max_retries=0), receiver.url)
            ask_all(app)
            finish()
            if not receiver.lines:
                raise RuntimeError(f"{producer} exported nothing to {receiver.url}")
            return receiver.write(outdir / f"{producer}.jsonl")
    finally:
        stop(fake, thread)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in SETUPS:
        print(
            f"usage: python -m tests.producers.run {{{','.join(SETUPS)}}} OUTDIR", file=sys.stderr
        )
        return 2
    outdir = Path(argv[1])
    outdir.mkdir(parents=True, exist_ok=True)
    print(produce(argv[0], outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
