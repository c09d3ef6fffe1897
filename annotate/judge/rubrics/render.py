"""The calibration card as Markdown for people: the same numbers as the card document, each
formatted once here (three decimals), as the Calibration page shows them. Every name, status
and verdict goes through `traces.markdown.inert`: a feature or reviewer name is data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from annotate.judge.rubrics.card import CARD_STATISTICS
from annotate.judge.rubrics.split import HELD_OUT, TUNING
from annotate.traces.markdown import inert


def number(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def stat_cells(stat: Mapping[str, Any] | None) -> str:
    stat = stat or {}
    interval = (
        f"[{number(stat.get('low'))}, {number(stat.get('high'))}]"
        if stat.get("low") is not None
        else inert(stat.get("reason") or "no interval")
    )
    return f"{number(stat.get('value'))} | {interval} | {inert(stat.get('units', ''))}"


def slice_cell(entry: Mapping[str, Any], name: str) -> str:
    """A slice's statistic with its interval, or why it has none ("too few to say: ...")."""
    if entry.get("reason"):
        return cell(entry["reason"])
    stat = entry.get(name) or {}
    if stat.get("value") is None:
        return cell(stat.get("reason") or "—")
    if stat.get("low") is None:
        return f"{number(stat['value'])} ({cell(stat.get('reason') or 'no interval')})"
    return f"{number(stat['value'])} [{number(stat['low'])}, {number(stat['high'])}]"


def thresholds_line(thresholds: Mapping[str, Any]) -> str:
    """The readiness rule the card was judged by: each statistic's lower bound and its floor."""
    rules = [
        f"{cell(name)} lower bound >= {value}" if value is not None else f"{cell(name)} not set"
        for name, value in thresholds.items()
    ]
    return "- Readiness thresholds (a part or slice is ready when every set one holds): " + (
        "; ".join(rules) or "none set"
    )


def cell(text: Any) -> str:
    """Text in a Markdown table cell or line: inert, so a `|` cannot end the cell, a newline
    the row, nor `<img>` or a link load anything."""
    return inert(text)


def _part(card: Mapping[str, Any], part: str, title: str) -> list[str]:
    found = card[part]
    lines = [f"### {title}", "", f"Claims with gold and a verdict: {found['n']}", ""]
    lines += ["| statistic | value | 95% interval | units |", "|---|---|---|---|"]
    lines += [f"| {name} | {stat_cells(found[name])} |" for name in CARD_STATISTICS]
    lines += ["", f"Readiness: {cell(found['readiness']['verdict'])}", ""]
    if found["slices"]:
        lines += ["Per slice, each statistic with its 95% interval:", ""]
        lines += ["| slice | units | " + " | ".join(CARD_STATISTICS) + " | readiness |"]
        lines += ["|---|---|" + "---|" * len(CARD_STATISTICS) + "---|"]
        for entry in found["slices"]:
            where = ", ".join(f"{k}={v}" for k, v in entry["slice"].items())
            cells = [slice_cell(entry, name) for name in CARD_STATISTICS]
            verdict = entry["readiness"]["verdict"]
            lines.append(
                f"| {cell(where)} | {entry['n']} | {' | '.join(cells)} | {cell(verdict)} |"
            )
        lines.append("")
    return lines


def card_markdown(card: Mapping[str, Any], status: Mapping[str, Any] | None = None) -> list[str]:
    pinned = card["pinned_to"]
    agreement = card["reviewer_agreement"]
    lines = ["## Calibration card", ""]
    if status and status.get("stale"):
        lines += [f"**{cell(status['status'])}**", ""]
    lines += [
        f"- Judge: {cell(card['judge'])} (model {cell(pinned['model'])}, rubric version "
        f"{cell(pinned['rubric_version'])}, granularity {cell(pinned['granularity'])})",
        f"- Fingerprint: {cell(card['fingerprint'])} (prompt template "
        f"{cell(pinned['template_hash'])}, rubric {cell(pinned['rubric_hash'])})",
        f"- Sample: {cell(card['sample'])}; date {cell(card['date'])}",
        f"- Labelled claims: {card['labelled_claims']} ({card['held_out_claims']} held out); "
        f"few-shot examples (never scored): {card['few_shot_examples']}",
        f"- Reviewers: {', '.join(cell(r) for r in card['reviewers'])}",
        f"- Reviewer agreement (Krippendorff's alpha, binary): {stat_cells(agreement)}",
        thresholds_line(card.get("thresholds") or {}),
        "",
    ]
    lines += _part(card, HELD_OUT, "Held-out part (the rubric was not tuned on these claims)")
    lines += _part(card, TUNING, "Tuning part (the rubric was tuned here: shown for comparison)")
    return lines
