"""The report's section on ratings on a scale: tables from annotate.ratings' document, no
statistics of its own. Nothing when no response was rated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.ratings.estimates import SLICES
from annotate.report.render import Block, Heading, Paragraph, Table

AGREEMENT = ("krippendorff_alpha_ordinal", "krippendorff_alpha_interval", "icc_2_1")
JUDGE = ("weighted_kappa_quadratic", "mean_bias", "mean_absolute_difference", "spearman_rho")
HEADER = ["statistic", "value [95% interval]", "units", "interval / units used"]


def _rows(document: Mapping[str, Any], names: tuple[str, ...]) -> list[list[Any]]:
    return [
        [n, document[n], document[n].get("units"), document[n].get("method") or ""] for n in names
    ]


def _criterion_blocks(name: str, found: Mapping[str, Any]) -> list[Block]:
    agreement = found["agreement"]
    pairs = [
        [f"weighted kappa (quadratic) {p['a']} / {p['b']}", p, p["units"], p.get("method") or ""]
        for p in agreement["weighted_kappa_quadratic"]
    ]
    blocks: list[Block] = [
        Heading(f"Ratings: {name}", 3),
        Table(HEADER, _rows(agreement, AGREEMENT) + pairs, caption="Between reviewers"),
    ]
    for judge, doc in found["judges"].items():
        caption = f"{judge} against the reviewers' mean ({doc['readiness']['verdict']})"
        blocks.append(Table(HEADER, _rows(doc, JUDGE), caption=caption))
    estimates = found["estimates"]
    cuts = [("overall", estimates["overall"])]
    cuts += [(f"{n}={k}", v) for n in SLICES for k, v in estimates[n].items()]
    blocks.append(
        Table(
            [
                "slice",
                "mean [95% interval]",
                f"share at or below {estimates['at_or_below']:g}",
                "responses",
            ],
            [[c, v["mean"], v["share_at_or_below"], v["mean"]["units"]] for c, v in cuts],
            caption=estimates["method"],
        )
    )
    return blocks


def ratings_blocks(document: Mapping[str, Any] | None) -> list[Block]:
    criteria = (document or {}).get("criteria") or {}
    if not criteria:
        return []
    blocks: list[Block] = [
        Heading("Ratings on a scale"),
        Paragraph(
            "Whole responses rated on the rubric's criteria; a judge's mean bias is judge minus "
            "the reviewers' mean, in scale points. Intervals resample traces within strata."
        ),
    ]
    for name, found in criteria.items():
        blocks += _criterion_blocks(name, found)
    return blocks
