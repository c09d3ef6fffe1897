"""Judging 2,000 claims against the fake Messages server answering in 200 ms each.

The figure is the wall time of `run_judge` (prompts, the real SDK over HTTP, parsing, every
call and verdict stored). Beside it: the ideal, claims x latency / concurrency, and a
baseline measured in the same run: the same number of bare SDK calls on the same server at
the same concurrency, with nothing built, parsed or stored. Sized by ANNOTATE_BENCH_JUDGE
(claims, default 2,000) and ANNOTATE_BENCH_JUDGE_CONCURRENCY (default 16).
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from fake_anthropic import FakeAnthropic, start, stop  # noqa: E402
from judge_fakes import answer  # noqa: E402
from rubric_data import prepare_rubric_store  # noqa: E402

from annotate.judge import llm  # noqa: E402
from annotate.judge.rubrics.runner import run_judge  # noqa: E402
from annotate.store import open_store  # noqa: E402
from tests.bench.figures import bench_size, show  # noqa: E402

LATENCY = 0.2


def bare_calls(fake: FakeAnthropic, count: int, concurrency: int) -> float:
    client = fake.client(max_retries=0)
    params = {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "<context>\n$1\n</context>\n\n<claim>\n$1\n</claim>"}
        ],
    }
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda _: client.messages.create(**params), range(count)))
    return time.perf_counter() - started


def run() -> None:
    claims = bench_size("ANNOTATE_BENCH_JUDGE", 2000)
    concurrency = bench_size("ANNOTATE_BENCH_JUDGE_CONCURRENCY", 16)
    fake = FakeAnthropic()
    fake.responder = answer
    fake.latency = LATENCY
    thread = start(fake)
    try:
        with tempfile.TemporaryDirectory() as folder:
            store = open_store(Path(folder) / "bench.duckdb")
            prepare_rubric_store(store, Path(folder), count=(claims + 1) // 2)
            started = time.perf_counter()
            report = run_judge(
                store, "loop", client=fake.client(max_retries=0), concurrency=concurrency,
                retry=llm.Retry(attempts=3, timeout=30.0),
            )  # fmt: skip
            wall = time.perf_counter() - started
            store.close()
        baseline = bare_calls(fake, report.calls, concurrency)
    finally:
        stop(fake, thread)
    ideal = report.calls * LATENCY / concurrency
    show(
        f"judge {report.judged} claims ({report.failed} failed) in {report.calls} calls, "
        f"{LATENCY * 1000:.0f} ms each, concurrency {concurrency}: {wall:.1f} s"
    )
    show(f"  ideal (claims x latency / concurrency): {ideal:.1f} s; ratio {wall / ideal:.2f}x")
    show(
        f"  baseline, same run: {report.calls} bare SDK calls at the same concurrency: "
        f"{baseline:.1f} s; ratio {wall / baseline:.2f}x"
    )
