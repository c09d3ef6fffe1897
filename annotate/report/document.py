"""The calibration report: one document (JSON) and its HTML and Markdown renderings.

Every number comes from the calibration and agreement documents; the renderings add
no statistics. Files are written whole (temporary file, then rename) or not at all.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annotate import __version__
from annotate.accounts.activity import Actor, as_actor, record_act
from annotate.agreement.calibration import JUDGE_STATISTICS
from annotate.agreement.reliability import PAIR_STATS, agreement
from annotate.agreement.reliability import STATISTICS as AGREEMENT_STATISTICS
from annotate.errors import counted
from annotate.ratings.document import ratings_document
from annotate.report.ratings import ratings_blocks
from annotate.report.render import (
    Block,
    Heading,
    Paragraph,
    Table,
    prefetch_chart,
    render_html,
    render_markdown,
    report_chart,
)
from annotate.store import Store


def build_report(
    store: Store,
    calibration: Mapping[str, Any],
    seed: int = 0,
    repetitions: int = 1000,
    actor: Actor | str | None = None,
) -> dict[str, Any]:
    """The calibration document beside reviewer agreement on the same traces and level.

    Preparing it is an act: recorded with its actor and the thresholds it used. The charts
    start in the chart helper as soon as their numbers exist (as `report_blocks` asks)."""
    prefetch_chart("confusion", calibration["confusion"])
    prefetch_chart("slices", calibration["slices"])
    reviewers = agreement(
        store, calibration["sample"], calibration["level"], "binary", seed, repetitions
    )
    prefetch_chart("over_time", reviewers["over_time"])
    who = as_actor(actor)
    record_act(
        store, who, "report", calibration["judge"], sample=calibration["sample"],
        level=calibration["level"], thresholds=calibration["thresholds"],
    )  # fmt: skip
    return {
        "prepared_by": who.name,
        "title": f"Calibration of {calibration['judge']} against reviewers",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "annotate_version": __version__,
        "seed": seed,
        "resamples": repetitions,
        "calibration": dict(calibration),
        "agreement": reviewers,
        "ratings": ratings_document(store, calibration["sample"], seed, repetitions),
    }


def _stat_rows(document: Mapping[str, Any], names: Sequence[str]) -> list[list[Any]]:
    """One row per statistic: value [interval] (or undefined: reason), units, how."""
    return [
        [name, document[name], document[name].get("units"), document[name].get("method") or ""]
        for name in names
    ]


STAT_HEADER = ["statistic", "value [95% interval]", "units", "interval / units used"]


PARTS = {
    "held_out": "the held-out part of the sample's split (claims the rubric was not tuned on)",
    "tuning": "the tuning part of the sample's split (claims the rubric was tuned on)",
}


def _part_words(part: str | None) -> str:
    """Our own judge is scored on one part of the split: the report says which."""
    return f", scored on {PARTS[part]}" if part in PARTS else ""


def _judge_blocks(calibration: Mapping[str, Any]) -> list[Block]:
    readiness = calibration["readiness"]
    tone = "good" if readiness["ready"] else "bad"
    alt = calibration["alt_test"]
    blocks: list[Block] = [
        Heading(f"{calibration['judge']} against gold ({calibration['level']} level)"),
        Paragraph(f"Readiness: {readiness['verdict']}", tone),
        Paragraph(
            f"{counted(calibration['n'], 'unit')} with gold{_part_words(calibration.get('part'))}"
            "; positive means unsupported. Each interval "
            "names its method. The judge abstained on "
            f"{calibration['coverage']['abstained']} of {calibration['coverage']['units']} "
            "units with gold; abstentions are in no rate."
        ),
        *report_chart("confusion", "Confusion matrix", calibration["confusion"]),
        Table(
            STAT_HEADER,
            _stat_rows(
                {**calibration, "abstained_share": calibration["coverage"]["abstained_share"]},
                [*JUDGE_STATISTICS, "abstained_share"],
            ),
        ),
        Table(
            ["threshold on", "minimum lower bound", "lower bound", "met"],
            [[c["statistic"], c["threshold"], c["low"], c["passed"]] for c in readiness["checks"]],
            caption="Readiness thresholds",
        ),
        Heading("The judge as one more rater", 3),
        Table(
            ["raters", "Krippendorff's alpha [95% interval]"],
            [
                ["reviewers", calibration["judge_as_rater"]["reviewers"]],
                ["reviewers and judge", calibration["judge_as_rater"]["reviewers_and_judge"]],
            ],
            caption=f"{calibration['judge_as_rater']['units']} units rated by 2+ reviewers and the judge",
        ),
        Heading("Alternative annotator test", 3),
        Paragraph(alt.get("verdict") or alt.get("reason") or "", "note"),
        *[Paragraph(note) for note in alt.get("notes", [])],
    ]
    if alt.get("reviewers"):
        blocks.append(
            Table(
                ["reviewer", "units", "test", "p", "p (BY)", "judge wins"],
                [
                    [
                        r["reviewer"],
                        r["units"],
                        r["test"],
                        r["p_value"],
                        r["p_adjusted"],
                        r["rejected"],
                    ]
                    for r in alt["reviewers"]
                ],
                caption=f"epsilon {alt.get('epsilon')}, q {alt.get('q')}, "
                f"winning rate {alt.get('winning_rate')}",
            )
        )
    return blocks


def _slice_blocks(calibration: Mapping[str, Any]) -> list[Block]:
    slices = calibration["slices"]
    if not slices:
        return []
    blocks: list[Block] = [Heading("Per slice")]
    blocks += report_chart("slices", "Sensitivity and specificity per slice, 95% intervals", slices)
    rows = []
    for entry in slices:
        name = ", ".join(f"{k}={v}" for k, v in entry["slice"].items())
        if entry.get("reason"):
            rows.append(
                [name, entry["n"], entry["reason"], None, None, entry["readiness"]["verdict"]]
            )
        else:
            rows.append(
                [name, entry["n"], entry["sensitivity"], entry["specificity"], entry["cohen_kappa"],
                 entry["readiness"]["verdict"]]
            )  # fmt: skip
    blocks.append(
        Table(["slice", "units", "sensitivity", "specificity", "kappa", "readiness"], rows)
    )
    return blocks


def _agreement_blocks(document: Mapping[str, Any]) -> list[Block]:
    blocks: list[Block] = [
        Heading("Agreement between reviewers"),
        Paragraph(
            f"{document['units']} units with two or more reviewers and "
            f"{document['single_rated_units']} with one (binary scale: supported, unsupported, "
            "excluded)."
        ),
        Table(STAT_HEADER, _stat_rows(document, AGREEMENT_STATISTICS)),
        Table(
            ["statistic", "reviewers", "value [95% interval]", "units"],
            [
                [name, f"{p['a']} / {p['b']}", p, p["units"]]
                for name in PAIR_STATS
                for p in document[name]
            ],
            caption="Each pair of reviewers",
        ),
    ]
    if document["prevalence"]["note"]:
        blocks.append(Paragraph(document["prevalence"]["note"], "note"))
    blocks.append(
        Table(
            [
                "reviewer",
                "labels",
                "agreement with others",
                "agreement with gold",
                "s per label",
                "flags",
            ],
            [
                [
                    r["reviewer"],
                    r["labels"],
                    r["agreement_with_others"],
                    r["agreement_with_gold"],
                    r["seconds_per_label"],
                    "; ".join(r["flags"]) or r.get("note") or "",
                ]
                for r in document["per_reviewer"]
            ],
            caption="Per reviewer",
        )  # fmt: skip
    )
    return blocks + report_chart(
        "over_time", "Percent agreement and alpha over time, 95% intervals", document["over_time"]
    )


def _disagreement_blocks(calibration: Mapping[str, Any]) -> list[Block]:
    found = calibration["disagreements"]
    return [
        Heading(f"Disagreements with gold ({len(found)})"),
        Table(
            ["trace", "claim", "text", "judge", "gold", "kind", "judge's explanation"],
            [
                [
                    d["trace_id"],
                    d["claim_index"],
                    d["claim"],
                    d["judge_label"],
                    d["gold_label"] or d["gold"],
                    d["kind"],
                    d["explanation"],
                ]
                for d in found
            ],
        ),  # fmt: skip
    ]


def report_blocks(document: Mapping[str, Any]) -> list[Block]:
    calibration = document["calibration"]
    scope = calibration["sample"] or "every labelled trace"
    gold = calibration["gold"]
    return [
        Paragraph(
            f"Sample: {scope}. Generated {document['generated_at']} by annotate "
            f"{document['annotate_version']}; bootstrap seed {document['seed']}, "
            f"{document['resamples']} resamples. {gold['unresolved_claims']} claims have no gold "
            "(unresolved disagreement) and are left out."
        ),
        *_judge_blocks(calibration),
        *_slice_blocks(calibration),
        *_agreement_blocks(document["agreement"]),
        *ratings_blocks(document.get("ratings")),
        *_disagreement_blocks(calibration),
    ]


def _write(path: Path, text: str) -> Path:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return path


def write_report(document: Mapping[str, Any], directory: Path) -> list[Path]:
    """report.html, report.md and report.json in `directory`, each written whole."""
    directory.mkdir(parents=True, exist_ok=True)
    return [_write(directory / name, text) for name, text in render_report(document).items()]


def render_report(document: Mapping[str, Any]) -> dict[str, str]:
    """The three renderings in memory (for download buttons)."""
    blocks = report_blocks(document)
    return {
        "report.html": render_html(document["title"], blocks),
        "report.md": render_markdown(document["title"], blocks),
        "report.json": json.dumps(document, indent=2, default=str),
    }
