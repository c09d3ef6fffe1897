"""The Calibration page's parts: the judge as one more rater, the judge label mapping, the
readiness thresholds, the disagreements with their context, and the prepared report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

import ui
from annotate.agreement.calibration import DEFAULT_THRESHOLDS, save_thresholds, threshold_floor
from annotate.errors import AnnotateError
from annotate.judge.labels import OUTCOMES, mapping_rows, set_label
from annotate.labelling.session import claim_view
from annotate.report.document import build_report, render_report
from annotate.report.render import warm_up
from annotate.store import Store
from widgets import claim_display, downloads


def judge_label_mapping(store: Store, judge: str, user, is_lead: bool) -> None:
    """Every label the judge used and its outcome; a lead maps one at a time."""
    rows = ui.computed(mapping_rows, judge)  # counts every verdict: once per change of the store
    st.dataframe(
        pd.DataFrame(rows, columns=["label", "verdicts", "outcome", "source"]),
        hide_index=True,
        key="calibration_judge_labels",
    )
    if not is_lead:
        st.caption("Only a lead can change the mapping.")
        return
    left, right, button = st.columns([2, 2, 1])
    label = left.selectbox("Judge label", [r["label"] for r in rows], key="calibration_map_label")
    outcome = right.selectbox("maps to", OUTCOMES, key="calibration_map_outcome")
    if button.button("Save mapping", key="calibration_map_save"):
        try:
            set_label(store, judge, label, outcome, user.name)
            st.rerun()
        except AnnotateError as exc:
            ui.show_error(exc)


def thresholds_editor(store: Store, saved: dict, user) -> None:
    """Leads edit and save the thresholds; nothing unsaved reaches a verdict or a report."""
    columns = st.columns(len(DEFAULT_THRESHOLDS))
    chosen = {}
    for column, name in zip(columns, DEFAULT_THRESHOLDS, strict=True):
        use = column.checkbox(
            ui.fmt("require {}", name), value=saved[name] is not None, key=f"calibration_use_{name}"
        )
        value = column.number_input(
            ui.fmt("minimum lower bound of {}", name),
            float(threshold_floor(name)),
            1.0,
            saved[name] or 0.8,
            0.05,
            key=f"calibration_min_{name}",
        )
        chosen[name] = value if use else None
    if st.button("Save thresholds", key="calibration_save_thresholds"):
        try:
            save_thresholds(store, chosen, user.name)
            st.rerun()
        except AnnotateError as exc:
            ui.show_error(exc)


# Disagreements shown a page at a time: 1,999 rows (and as many choices in the box below them)
# took chromium 0.4-0.7 s to draw on every visit of the page; the report holds them all.
PAGE_ROWS = 200


def disagreements(store: Store, found: list[dict]) -> None:
    """The table of disagreements with gold, PAGE_ROWS at a time; a claim-level one opens
    with its context."""
    shown, page = found, 1
    if len(found) > PAGE_ROWS:
        pages = -(-len(found) // PAGE_ROWS)
        page = int(
            st.number_input(
                ui.fmt("Page (of {}, {} rows a page)", pages, PAGE_ROWS),
                min_value=1,
                max_value=pages,
                value=1,
                key="calibration_disagreements_page",
            )
        )
        first = (page - 1) * PAGE_ROWS
        shown = found[first : first + PAGE_ROWS]
        st.caption(
            ui.fmt(
                "Rows {} to {} of {}; the report (Prepare the report, below) holds them all.",
                first + 1,
                first + len(shown),
                len(found),
            )
        )
    frame = pd.DataFrame(shown)[
        ["trace_id", "claim_index", "kind", "judge_label", "gold", "claim", "explanation"]
    ]
    st.dataframe(frame, hide_index=True, key="calibration_disagreements")
    claims = [d for d in shown if d["claim_index"] is not None]
    if claims:
        pick = st.selectbox(
            "Open a disagreement with its context",
            range(len(claims)),
            format_func=lambda i: (
                f"{claims[i]['trace_id']} · claim {claims[i]['claim_index'] + 1} · {claims[i]['kind']}"
            ),
            key="calibration_open" if page == 1 else f"calibration_open_{page}",
        )
        chosen = claims[pick]
        ui.show_text("Judge's explanation", chosen["explanation"])
        # kept per change of the store: a rerun of the page does not read the trace again
        view = ui.computed(claim_view, chosen["trace_id"], chosen["claim_index"])
        claim_display.show_claim(view)


def report_downloads(store: Store, report: dict, settings: tuple, user) -> None:
    """Prepare the report once for these settings, then offer its three files."""
    if st.button("Prepare the report (HTML, Markdown, JSON)", key="calibration_prepare"):
        warm_up()  # the chart engine starts while the agreement numbers are computed
        document = build_report(store, report, actor=user.name)
        downloads.keep_prepared("calibration_report", render_report(document), *settings, report)
    files = downloads.prepared("calibration_report", *settings, report)
    if files:
        kinds = {
            "report.html": "text/html",
            "report.md": "text/markdown",
            "report.json": "application/json",
        }
        for column, (name, text) in zip(st.columns(3), files.items(), strict=True):
            downloads.download_button(
                ui.fmt("Download {}", name),
                text,
                file_name=name,
                mime=kinds[name],
                key=f"calibration_download_{name}",
                where=column,
            )


PARTS = {
    "held_out": "held-out part (not tuned on)",
    "tuning": "tuning part (tuned on)",
    None: "all",
}


def part_choice() -> str | None:
    """Which part of the rubric split a rubric judge is scored on (held-out by default)."""
    return st.radio(
        "Claims scored (our judge: the held-out part is what its calibration card reports)",
        list(PARTS),
        format_func=PARTS.get,
        horizontal=True,
        key="calibration_part",
    )


def as_a_rater(report: Mapping[str, Any]) -> None:
    """The judge as one more rater (alpha with and without it) and the alternative annotator
    test."""
    rater = report["judge_as_rater"]
    st.subheader("The judge as one more rater")
    st.dataframe(
        pd.DataFrame(
            [
                claim_display.stat_row("alpha, reviewers", rater["reviewers"]),
                claim_display.stat_row("alpha, reviewers + judge", rater["reviewers_and_judge"]),
            ]
        ),
        hide_index=True,
        key="calibration_rater",
    )
    st.subheader("Alternative annotator test")
    alt = report["alt_test"]
    if alt.get("passed") is None:
        st.info(ui.md(alt.get("reason") or "not run"))
    else:
        (st.success if alt["passed"] else st.warning)(ui.md(alt["verdict"]))
        st.dataframe(pd.DataFrame(alt["reviewers"]), hide_index=True, key="calibration_alt_test")
    for note in alt.get("notes", []):
        st.text(note)
