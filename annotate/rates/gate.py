"""The release gate and the rate threshold setting.

Per slice: ok when the interval lies under the threshold, breach when above, warning when the
threshold is inside it. A slice with no number is not ok: the gate counts it as a warning.
The judge-corrected estimator refuses a slice where the judge is not calibrated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from annotate.accounts.activity import Actor, record_act
from annotate.errors import UsageError, slice_label
from annotate.rates.estimate import DEFAULT_THRESHOLD, rate_rows
from annotate.rates.inputs import load_inputs
from annotate.stats.rates import BREACH, OK
from annotate.store import Store
from annotate.store import assignments as settings_sql

THRESHOLD_KEY = "rates_threshold"
GATE_ESTIMATORS = ("weighted_human", "judge_corrected")
# 5, not 4: 4 is every command's "unexpected error (a bug)", which a pipeline must tell apart
EXIT_OK, EXIT_BREACH, EXIT_WARNING = 0, 1, 5


def load_threshold(store: Store) -> float:
    raw = settings_sql.get_setting(store, THRESHOLD_KEY)
    return float(json.loads(raw)) if raw else DEFAULT_THRESHOLD


def save_threshold(store: Store, value: float, actor: Actor | str | None = None) -> None:
    """The alert threshold on a hallucination rate (a lead's setting, recorded)."""
    if not 0 < value < 1:
        raise UsageError(f"the rate threshold is a share between 0 and 1, got {value}")
    with store.transaction():
        settings_sql.put_setting(store, THRESHOLD_KEY, json.dumps(value))
        record_act(store, actor, "setting", THRESHOLD_KEY, value=value)


def parse_slices(items: Sequence[str]) -> dict[str, str]:
    """['feature=billing_qa', ...] -> {'feature': 'billing_qa', ...}."""
    found = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise UsageError(
                f"--slice takes COLUMN=VALUE, got {item!r} (e.g. --slice feature=billing_qa)"
            )
        found[name.strip()] = value
    return found


@dataclass
class GateResult:
    rows: list[dict[str, Any]]
    code: int
    verdict: str

    def as_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "exit_code": self.code, "verdict": self.verdict}


def run_gate(
    store: Store,
    sample: str,
    max_rate: float,
    where: Mapping[str, str] | None = None,
    by: Sequence[str] = (),
    level: str = "response",
    estimator: str = "weighted_human",
    judge: str | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> GateResult:
    if estimator not in GATE_ESTIMATORS:
        raise UsageError(f"--estimator is one of {', '.join(GATE_ESTIMATORS)}, got {estimator!r}")
    if not 0 < max_rate < 1:
        raise UsageError(f"--max-rate is a share between 0 and 1, got {max_rate}")
    inputs = load_inputs(store, sample, [*by, *(where or {})], judge)
    _check_slice_values(inputs.frame, where or {})
    rows = rate_rows(inputs, by, [level], [estimator], max_rate, resamples, seed, where)
    if estimator == "judge_corrected":
        refused = [r for r in rows if r["rate"] is None]
        if refused:
            first = refused[0]
            raise UsageError(
                f"the judge-corrected rate cannot gate slice {slice_label(first['slice'])}: "
                f"{first.get('reason')}; label more traces there or gate on weighted_human"
            )
    return GateResult(rows, *gate_code(rows))


def _check_slice_values(frame: Any, where: Mapping[str, str]) -> None:
    """A --slice value no trace of the sample's frame holds is a typo, not a slice with no
    number (which would exit as a warning)."""
    for column, value in where.items():
        present = sorted({str(v) for v in frame[column].dropna().unique()})
        if value not in present:
            shown = ", ".join(present[:20]) + (", ..." if len(present) > 20 else "")
            raise UsageError(
                f"no trace of the sample's frame has {column}={value!r}; its values: "
                f"{shown or 'none'}"
            )


def gate_code(rows: Sequence[Mapping[str, Any]]) -> tuple[int, str]:
    states = [r["state"] for r in rows]
    if BREACH in states:
        bad = [slice_label(r["slice"]) for r in rows if r["state"] == BREACH]
        return EXIT_BREACH, "breach: the interval lies above the threshold in " + ", ".join(bad)
    if all(s == OK for s in states):
        return EXIT_OK, "ok: every interval lies under the threshold"
    unsure = [slice_label(r["slice"]) for r in rows if r["state"] != OK]
    return (
        EXIT_WARNING,
        "warning: the threshold is inside the interval (or no number) in " + ", ".join(unsure),
    )
