"""A calibrated rubric export as the runtime check reads it: the rubric (checked, its content
hash verified), the model the card was made for, and the card's held-out sensitivity and
specificity. Reads the file `annotate rubric export` writes; no store, no app.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotate.errors import InputError
from annotate.judge.rubrics.rubric_file import read_document
from annotate.judge.rubrics.spec import (
    BASELINE_MODEL,
    SPEC_KEYS,
    Rubric,
    RubricError,
    check_content,
    content_hash,
)

JUDGE_PREFIX = "check-v"
HASH_CHARS = 12  # enough to tell versions apart in a judge's name
HELD_OUT_STATISTICS = ("sensitivity", "specificity")


@dataclass(frozen=True)
class RubricExport:
    """What a check needs from an export: the rubric, the model and the card's numbers."""

    rubric: Rubric
    model: str
    calibration: dict[str, Any] | None  # None: the version was never marked calibrated
    source: str = ""

    @property
    def judge(self) -> str:
        """The name the check's verdicts carry when they come back through OTLP."""
        return f"{JUDGE_PREFIX}{self.rubric.content_hash[:HASH_CHARS]}"

    def held_out(self, model: str) -> dict[str, Any]:
        """The card's held-out sensitivity and specificity, when the card is for `model`."""
        card_model = (self.calibration or {}).get("model")
        if self.calibration is None or card_model != model:
            why = "not calibrated" if self.calibration is None else f"the card is for {card_model}"
            return {"level": "claim", **dict.fromkeys(HELD_OUT_STATISTICS), "status": why}
        return {
            "level": "claim",  # the card's numbers are per claim, on its held-out claims
            **{name: self.calibration[name] for name in HELD_OUT_STATISTICS},
            "status": self.calibration["status"],
            "held_out_claims": self.calibration["held_out_claims"],
        }


def load_export(path: Path | str, require_calibrated: bool = True) -> RubricExport:
    """The export in `path`; InputError naming the file, the field and the fix."""
    return export_of(read_document(path), str(path), require_calibrated)


def export_of(
    document: Mapping[str, Any], where: str, require_calibrated: bool = True
) -> RubricExport:
    """An export document (read from a file, or made by rubrics.exchange.export_document)."""
    rubric = rubric_of(document, where)
    calibration = _calibration(document.get("calibrated"), where)
    if calibration is None and require_calibrated:
        raise InputError(
            f"{where}: field 'calibrated' is missing: rubric version {rubric.version} was never "
            "marked calibrated, so nobody knows what its verdicts are worth. Mark it "
            "(`annotate rubric calibrate`) and export it again, or allow it knowingly "
            "(--uncalibrated; require_calibrated=False)"
        )
    model = calibration["model"] if calibration else rubric.model
    return RubricExport(rubric, model, calibration, where)


def rubric_of(document: Mapping[str, Any], where: str) -> Rubric:
    """The document's rubric, its content checked and its hash verified."""
    content = document["rubric"]
    try:
        check_content(content, None)
    except RubricError as exc:
        raise InputError(f"{where}: rubric: {exc}") from None
    digest = content_hash(content)
    if document.get("content_hash") != digest:
        raise InputError(
            f"{where}: field 'content_hash' does not match the rubric's content (the file was "
            "edited after export); export the version again with `annotate rubric export`"
        )
    version = document.get("version")
    extra = {k: v for k, v in content.items() if k not in {"name", "labels", *SPEC_KEYS}}
    return Rubric(
        version=version if isinstance(version, int) else 0,
        name=str(content.get("name") or "default"),
        labels=list(content["labels"]),
        error_types=list(content.get("error_types") or []),
        instructions=content["instructions"],
        few_shot=list(content.get("few_shot") or []),
        model=content["model"],
        settings=dict(content.get("settings") or {}),
        granularity=content["granularity"],
        content_hash=digest,
        extra=extra,
    )


def _calibration(marked: Any, where: str) -> dict[str, Any] | None:
    if marked is None:
        return None
    try:
        card = marked["card"]
        held = card["held_out"]
        found = {name: _statistic(held[name]) for name in HELD_OUT_STATISTICS}
        return {
            **found,
            "model": str(card["pinned_to"]["model"]),
            "status": str(marked.get("status") or "fresh"),
            "fingerprint": card.get("fingerprint"),
            "held_out_claims": card.get("held_out_claims"),
        }
    except (AttributeError, KeyError, TypeError) as exc:
        raise InputError(
            f"{where}: field 'calibrated' has no card with held_out sensitivity and "
            f"specificity ({exc}); export the version again with `annotate rubric export`"
        ) from None


def _statistic(entry: Any) -> dict[str, Any]:
    """value, low, high, units of one card statistic (None where the card said too few)."""
    entry = entry or {}
    return {key: entry.get(key) for key in ("value", "low", "high", "units")}


def is_baseline(model: str) -> bool:
    return model == BASELINE_MODEL
