"""settings.json of an auditor bundle: every setting a bundle's numbers depend on besides
rates.json's params (readiness thresholds, the least shared units to flag a reviewer, each
judge's label mapping as it stood, defaults included). Written at export; applied to the
check's empty store, with the functions a lead saves them with, before it recomputes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from annotate.accounts.activity import Actor
from annotate.agreement.calibration import load_thresholds, save_thresholds
from annotate.agreement.reliability import load_min_shared, save_min_shared
from annotate.errors import UsageError
from annotate.judge.labels import OUTCOMES, mapping_rows, set_label
from annotate.store import Store

SETTINGS = "settings.json"
CHECK = Actor("verify-bundle", "bundle")  # who saved the settings into the check's own store


def bundle_settings(store: Store) -> dict[str, Any]:
    """The settings.json document of a bundle made from `store`."""
    mapping: dict[str, dict[str, str | None]] = {}
    for row in mapping_rows(store):
        mapping.setdefault(row["judge"], {})[row["label"]] = row["outcome"]
    return {
        "readiness_thresholds": load_thresholds(store),
        "min_shared_units": load_min_shared(store),
        "judge_labels": mapping,
    }


def _thresholds(store: Store, value: Any) -> None:
    if not isinstance(value, dict) or not all(
        v is None or (isinstance(v, int | float) and not isinstance(v, bool))
        for v in value.values()
    ):
        raise UsageError(f"not a statistic -> number or null table: {value!r}")
    save_thresholds(store, value, CHECK)


def _min_shared(store: Store, value: Any) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise UsageError(f"not a whole number: {value!r}")
    save_min_shared(store, value, CHECK)


def _judge_labels(store: Store, value: Any) -> None:
    """Each label the bundle's verdicts use is mapped as the file says. A label the lead saved
    (tables/judge_label_map.parquet) that the file maps otherwise is a problem: the file and
    the table disagree. A label with no outcome in the file stays as the check finds it."""
    if not isinstance(value, dict) or not all(
        isinstance(m, dict) and all(o is None or o in OUTCOMES for o in m.values())
        for m in value.values()
    ):
        raise UsageError(f"not a judge -> {{label: {' | '.join(OUTCOMES)} | null}} table")
    for row in mapping_rows(store):
        outcome = value.get(row["judge"], {}).get(row["label"])
        if outcome is None or outcome == row["outcome"]:
            continue
        if row["source"].startswith("set by"):
            raise UsageError(
                f"judge {row['judge']!r} label {row['label']!r} is {outcome} here, "
                f"{row['outcome']} in tables/judge_label_map.parquet"
            )
        set_label(store, row["judge"], row["label"], outcome, CHECK)


APPLY: dict[str, Callable[[Store, Any], None]] = {
    "readiness_thresholds": _thresholds,
    "min_shared_units": _min_shared,
    "judge_labels": _judge_labels,
}


def apply_settings(store: Store, data: bytes | None, problems: list[str]) -> bool:
    """Save settings.json's values into the check's store; a bundle made before it had
    none is checked with the defaults. Each value annotate never saves is a problem."""
    if data is None:
        return True
    try:
        document = json.loads(data)
    except ValueError as exc:
        problems.append(f"{SETTINGS}: not JSON ({exc})")
        return False
    if not isinstance(document, dict):
        problems.append(f"{SETTINGS}: not a table of settings")
        return False
    for key, apply in APPLY.items():
        if key in document:
            try:
                apply(store, document[key])
            except UsageError as exc:
                problems.append(f"{SETTINGS}: {key}: {exc}")
    return not problems
