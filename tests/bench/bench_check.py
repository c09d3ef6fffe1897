"""The runtime grounding check's latency: what it adds to the judge model's own answer time,
and the offline baseline's time per answer.

With the fake Messages server answering every call after 200 ms, each of 1 and 16 concurrent
callers checks two-claim answers (the default rubric judges claim by claim: two calls at once
per answer); beside it, the baseline measured in the same run: bare SDK calls to the same
server at the same concurrency, nothing built, parsed or judged. The figure is the check's
p50/p95 minus the bare call's. Then the offline baseline judge per answer, beside splitting
the answer into sentences alone. Sized by ANNOTATE_BENCH_CHECK (answers per caller, default
40) and ANNOTATE_BENCH_CHECK_OFFLINE (answers, default 5,000).
"""

from __future__ import annotations

import statistics
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
from rubric_data import trace_rows  # noqa: E402

from annotate.check import GroundingCheck  # noqa: E402
from annotate.check.export import RubricExport, export_of  # noqa: E402
from annotate.claims.sentences import split_sentences  # noqa: E402
from annotate.judge.rubrics.exchange import export_document  # noqa: E402
from annotate.store import open_store  # noqa: E402
from tests.bench.figures import bench_size, show  # noqa: E402

LATENCY = 0.2
CALLERS = (1, 16)
MODEL = "claude-haiku-4-5"


def default_export() -> RubricExport:
    """The default rubric as an export (uncalibrated: latency does not depend on the card)."""
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(Path(folder) / "bench.duckdb")
        document = export_document(store, 1)
        store.close()
    return export_of(document, "the default rubric", require_calibrated=False)


def percentiles(seconds: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    cuts = statistics.quantiles(seconds, n=20, method="inclusive")
    return statistics.median(seconds) * 1000, cuts[18] * 1000


def timed_by_callers(work, callers: int, per_caller: int) -> list[float]:
    """Each call's seconds, `callers` threads each doing `per_caller` calls."""

    def caller(index: int) -> list[float]:
        spent = []
        for n in range(per_caller):
            started = time.perf_counter()
            work(index * per_caller + n)
            spent.append(time.perf_counter() - started)
        return spent

    with ThreadPoolExecutor(callers) as pool:
        return [s for found in pool.map(caller, range(callers)) for s in found]


def bare_call(client, row: dict) -> None:
    text = f"<context>\n{row['context'][0]['text']}\n</context>\n\n<claim>\n{row['response']}\n</claim>"
    client.messages.create(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": text}]
    )


def online(export: RubricExport, per_caller: int) -> None:
    fake = FakeAnthropic()
    fake.responder = answer
    fake.latency = LATENCY
    thread = start(fake)
    rows = trace_rows(per_caller * max(CALLERS))
    try:
        client = fake.client(max_retries=0)
        with GroundingCheck(export, client=client, model=MODEL, timeout=30.0) as check:
            for callers in CALLERS:
                # warm-up: both open their connections to the fake before anything is timed
                timed_by_callers(lambda i: bare_call(client, rows[i]), callers, 1)
                timed_by_callers(
                    lambda i: check.check(rows[i]["response"], rows[i]["context"]), callers, 1
                )
                bare = timed_by_callers(lambda i: bare_call(client, rows[i]), callers, per_caller)
                checked = timed_by_callers(
                    lambda i: check.check(rows[i]["response"], rows[i]["context"]),
                    callers,
                    per_caller,
                )
                report(callers, per_caller, percentiles(checked), percentiles(bare))
    finally:
        stop(fake, thread)


def report(
    callers: int, per_caller: int, check: tuple[float, float], bare: tuple[float, float]
) -> None:
    show(
        f"check, {callers} concurrent caller(s) x {per_caller} two-claim answers, fake at "
        f"{LATENCY * 1000:.0f} ms: p50 {check[0]:.0f} ms, p95 {check[1]:.0f} ms"
    )
    show(
        f"  baseline, same run: bare SDK call p50 {bare[0]:.0f} ms, p95 {bare[1]:.0f} ms; "
        f"added by the check: p50 {check[0] - bare[0]:+.0f} ms, p95 {check[1] - bare[1]:+.0f} ms"
    )


def offline(export: RubricExport, answers: int) -> None:
    rows = trace_rows(answers)
    check = GroundingCheck(export, baseline=True)
    started = time.perf_counter()
    for row in rows:
        check.check(row["response"], row["context"])
    per_answer = (time.perf_counter() - started) / answers
    started = time.perf_counter()
    for row in rows:
        split_sentences(row["response"])
    split = (time.perf_counter() - started) / answers
    show(f"offline baseline check, {answers:,} answers: {per_answer * 1e6:.0f} µs per answer")
    show(
        f"  baseline, same run: splitting the answer into sentences alone {split * 1e6:.0f} µs; "
        f"ratio {per_answer / split:.1f}x"
    )


def run() -> None:
    export = default_export()
    online(export, bench_size("ANNOTATE_BENCH_CHECK", 40))
    offline(export, bench_size("ANNOTATE_BENCH_CHECK_OFFLINE", 5000))


if __name__ == "__main__":
    run()
