"""The runtime grounding check a production app calls: a calibrated rubric export judged
through the judge's own prompt, fences and answer parsing (annotate.judge.rubrics.prompt, llm), or the
offline baseline; a deadline after which the caller's fallback verdict stands (never true).

No store, no Streamlit, no app: a fresh interpreter importing annotate.check can run it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from annotate.check.export import RubricExport, is_baseline, load_export
from annotate.check.material import claim_spans, material_of
from annotate.check.result import UNKNOWN, CheckResult, ClaimVerdict, claim_outcome
from annotate.check.result import grounded as grounded_answer
from annotate.errors import UsageError
from annotate.judge import llm
from annotate.judge.rubrics import prompt
from annotate.judge.rubrics.baseline import baseline_verdict
from annotate.judge.rubrics.spec import BASELINE_MODEL
from annotate.stats.gold import UNSUPPORTED

DEFAULT_TIMEOUT = 10.0  # seconds for the whole check; then the fallback verdict
DEFAULT_CONCURRENCY = 32  # calls in flight across every caller of one GroundingCheck
NO_KEY_FIX = ", or check offline with the baseline judge (--baseline; baseline=True)"


class GroundingCheck:
    """Build once (from_export), call check() from any thread, close() at shutdown."""

    def __init__(
        self,
        export: RubricExport,
        *,
        client: Any = None,
        model: str | None = None,
        baseline: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        fallback: bool | str = UNKNOWN,
        tracer: Any = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = 1,
    ) -> None:
        _check_options(timeout, fallback, concurrency, retries)
        self.export, self.rubric = export, export.rubric
        self.model = BASELINE_MODEL if baseline else model or export.model
        self.offline = is_baseline(self.model)
        self.timeout, self.fallback, self.tracer = timeout, fallback, tracer
        self.retry = llm.Retry(attempts=retries + 1, timeout=timeout)
        self.held_out = export.held_out(self.model)
        self._prepared = prompt.prepared_parts(self.rubric)
        self._client = client
        self._pool = (
            None if self.offline else ThreadPoolExecutor(concurrency, thread_name_prefix="check")
        )
        if not self.offline and self._client is None:
            self._client = llm.make_client("the grounding check", NO_KEY_FIX)

    @classmethod
    def from_export(
        cls, path: Path | str, *, require_calibrated: bool = True, **options: Any
    ) -> GroundingCheck:
        """A check from the YAML `annotate rubric export` wrote for a calibrated version."""
        return cls(load_export(path, require_calibrated), **options)

    @property
    def judge(self) -> str:
        return self.export.judge

    def check(
        self,
        response: str,
        context: Any,
        request: str | None = None,
        *,
        claims: Sequence[str] | None = None,
        id: Any = None,
        response_id: str | None = None,
    ) -> CheckResult:
        """Is `response` grounded in `context`? Bad input raises CheckInputError; a failed or
        late judge gives the fallback verdict with the reason in `errors`."""
        started = time.perf_counter()
        material = material_of(response, context, request)
        verdicts = [ClaimVerdict(span) for span in claim_spans(response, claims)]
        errors = self._judge(material, verdicts, started + self.timeout)
        verdict = grounded_answer(verdicts, self.fallback)
        result = CheckResult(
            verdict, verdicts, self.judge, self._rubric_json(), self.model,
            (time.perf_counter() - started) * 1000, self.held_out, id, errors=errors,
            fallback=bool(errors) and not any(v.outcome == UNSUPPORTED for v in verdicts),
        )  # fmt: skip
        if self.tracer is not None:
            from annotate.check.telemetry import record_on_current_span

            record_on_current_span(result, response_id)
        return result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> GroundingCheck:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- judging ------------------------------------------------------------------------

    def _rubric_json(self) -> dict[str, Any]:
        rubric = self.rubric
        return {"name": rubric.name, "version": rubric.version, "content_hash": rubric.content_hash}

    def _judge(
        self, material: dict[str, Any], verdicts: list[ClaimVerdict], deadline: float
    ) -> list[str]:
        if not verdicts:
            return []
        if self.offline:
            for claim in verdicts:
                self._keep(claim, baseline_verdict(self.rubric, material, claim.span.text))
            return []
        jobs = self._jobs(verdicts)
        assert self._pool is not None
        futures = {self._pool.submit(self._call, material, job): job for job in jobs}
        done, late = wait(futures, timeout=max(0.0, deadline - time.perf_counter()))
        errors = [self._settle(future, futures[future]) for future in done]
        for future in late:
            future.cancel()
            for claim in futures[future]:
                claim.error = f"no verdict within the {self.timeout:g} s timeout"
        if late:
            errors.append(
                f"{len(late)} of {len(jobs)} judge calls timed out after {self.timeout:g} s"
            )
        return [e for e in errors if e]

    def _jobs(self, verdicts: list[ClaimVerdict]) -> list[list[ClaimVerdict]]:
        if self.rubric.granularity == "response":
            return [verdicts]
        return [[claim] for claim in verdicts]

    def _call(self, material: dict[str, Any], job: list[ClaimVerdict]) -> llm.Answer:
        listed = [(index, claim.span.text) for index, claim in enumerate(job)]
        call = llm.LLMCall("check", self.model, f"{self.judge}/{prompt.template_hash()}")
        params = prompt.judge_params(self.rubric, call, material, listed, self._prepared)
        return llm.call_structured(
            self._client, call, params, prompt.parser(self.rubric, len(job)), self.retry
        )

    def _settle(self, future: Future[llm.Answer], job: list[ClaimVerdict]) -> str:
        try:
            answer = future.result()
        except Exception as exc:  # a production check never raises for its judge
            answer = llm.Answer({}, error=f"{type(exc).__name__}: {exc}")
        if answer.error is not None:
            for claim in job:
                claim.error = answer.error
            return answer.error
        for claim, verdict in zip(job, answer.result, strict=True):
            self._keep(claim, verdict)
        return ""

    def _keep(self, claim: ClaimVerdict, verdict: prompt.Verdict) -> None:
        claim.verdict = verdict
        claim.outcome = claim_outcome(verdict, self.rubric.binary(), self.rubric.granularity)


def _check_options(timeout: float, fallback: Any, concurrency: int, retries: int) -> None:
    if fallback is not False and fallback != UNKNOWN:
        raise UsageError(
            f"fallback must be 'unknown' or False, got {fallback!r}: a check that did not "
            "finish cannot say an answer is grounded"
        )
    if not timeout > 0:
        raise UsageError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if concurrency < 1 or retries < 0:
        raise UsageError(
            f"concurrency must be at least 1 and retries at least 0, got {concurrency}, {retries}"
        )
