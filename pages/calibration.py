"""Calibration: the judge against the reviewers' gold, per slice, with readiness and the alt-test."""

import pandas as pd
import streamlit as st

import ui
from annotate import charts
from annotate.calibration import (
    DEFAULT_THRESHOLDS,
    JUDGE_STATISTICS,
    calibration,
    load_thresholds,
    save_thresholds,
)
from annotate.errors import AnnotateError
from annotate.judge_labels import OUTCOMES, UnmappedJudgeLabelError, mapping_rows, set_label
from annotate.labelling import claim_view
from annotate.report import build_report, render_report
from annotate.samples import list_samples
from annotate.sampling import STRATUM_COLUMNS
from annotate.store.assignments import judge_names
from annotate.store.samples import attribute_names

user = ui.require_role("lead", "auditor")
store = ui.store()


is_lead = user.role == "lead"
st.title("Calibration of the judge")

judges = judge_names(store)
if not judges:
    st.info("No judge verdicts in the store: import traces with judge verdicts, or run the judge.")
    st.stop()
ALL = "(every labelled trace)"
left, middle, right = st.columns(3)
judge = left.selectbox("Judge", judges, key="calibration_judge")
sample = middle.selectbox(
    "Sample", [ALL] + [s["name"] for s in list_samples(store)], key="calibration_sample"
)
level = right.selectbox("Level", ["claim", "response"], key="calibration_level")
slices = [*STRATUM_COLUMNS, "error_type", *attribute_names(store)]
by = st.multiselect("Slice by", slices, default=["feature"], key="calibration_by")


def judge_label_mapping() -> None:
    """Every label the judge used and its outcome; a lead maps one at a time."""
    rows = mapping_rows(store, judge)
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


def thresholds_editor(saved: dict) -> None:
    """Leads edit and save the thresholds; nothing unsaved reaches a verdict or a report."""
    columns = st.columns(len(DEFAULT_THRESHOLDS))
    chosen = {}
    for column, name in zip(columns, DEFAULT_THRESHOLDS, strict=True):
        use = column.checkbox(
            ui.fmt("require {}", name), value=saved[name] is not None, key=f"calibration_use_{name}"
        )
        value = column.number_input(
            ui.fmt("minimum lower bound of {}", name),
            -1.0,
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


saved = load_thresholds(store)
scope = None if sample == ALL else sample
try:
    report = calibration(store, judge, scope, level, by, thresholds=saved)
except UnmappedJudgeLabelError as exc:
    ui.show_error(exc)
    with st.expander("Judge labels: how each maps to supported / unsupported / abstained", True):
        judge_label_mapping()
    st.stop()
if not report["n"]:
    st.info(ui.fmt("No {} has both a verdict and a gold label yet.", level))
    st.stop()
verdict = report["readiness"]
(st.success if verdict["ready"] else st.error)(ui.fmt("Overall: {}", verdict["verdict"]))
cover = report["coverage"]
st.caption(
    ui.fmt(
        "{} {}s with gold and a verdict · positive = unsupported · the judge abstained on {} "
        "of {} (left out of every rate)",
        report["n"],
        level,
        cover["abstained"],
        cover["units"],
    )
)

left, right = st.columns([1, 2])
left.altair_chart(charts.confusion_chart(report["confusion"]), key="calibration_confusion")
right.dataframe(
    pd.DataFrame(
        [ui.stat_row(n, report[n]) for n in JUDGE_STATISTICS]
        + [ui.stat_row("abstained share", cover["abstained_share"])]
    ),
    hide_index=True,
    key="calibration_judge_table",
)

if report["slices"]:
    st.subheader("Per slice")
    chart = charts.slice_chart(report["slices"])
    if chart is not None:
        st.altair_chart(chart, width="stretch", key="calibration_slices_chart")
    rows = []
    for entry in report["slices"]:
        row = {
            "slice": ", ".join(f"{k}={v}" for k, v in entry["slice"].items()),
            "units": entry["n"],
        }
        if entry.get("reason"):
            row["note"] = entry["reason"]
        else:
            for name in ("sensitivity", "specificity", "cohen_kappa"):
                row[name] = entry[name].get("value")
                row[f"{name} low"] = entry[name].get("low")
                if entry[name].get("reason"):
                    row["note"] = entry[name]["reason"]
        row["readiness"] = entry["readiness"]["verdict"]
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="calibration_slices")

st.subheader("The judge as one more rater")
rater = report["judge_as_rater"]
st.dataframe(
    pd.DataFrame(
        [
            ui.stat_row("alpha, reviewers", rater["reviewers"]),
            ui.stat_row("alpha, reviewers + judge", rater["reviewers_and_judge"]),
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

st.subheader(ui.fmt("Disagreements with gold ({})", len(report["disagreements"])))
found = report["disagreements"]
if found:
    frame = pd.DataFrame(found)[
        ["trace_id", "claim_index", "kind", "judge_label", "gold", "claim", "explanation"]
    ]
    st.dataframe(frame, hide_index=True, key="calibration_disagreements")
    claims = [d for d in found if d["claim_index"] is not None]
    if claims:
        pick = st.selectbox(
            "Open a disagreement with its context",
            range(len(claims)),
            format_func=lambda i: (
                f"{claims[i]['trace_id']} · claim {claims[i]['claim_index'] + 1} · {claims[i]['kind']}"
            ),
            key="calibration_open",
        )
        chosen = claims[pick]
        ui.show_text("Judge's explanation", chosen["explanation"])
        ui.show_claim(claim_view(store, chosen["trace_id"], chosen["claim_index"]))

st.subheader("Settings")
with st.expander("Judge labels: how each maps to supported / unsupported / abstained"):
    judge_label_mapping()
with st.expander("Readiness thresholds (saved; on lower bounds of 95% intervals)"):
    st.dataframe(
        pd.DataFrame([{"threshold on": k, "minimum lower bound": v} for k, v in saved.items()]),
        hide_index=True,
        key="calibration_saved_thresholds",
    )
    if is_lead:
        thresholds_editor(saved)
    else:
        st.caption("The verdict and the report use these saved thresholds; only a lead edits them.")

st.subheader("Report")
st.caption("The report uses the saved thresholds above, whoever prepares it.")
settings = repr((judge, scope, level, by, saved))
if st.button("Prepare the report (HTML, Markdown, JSON)", key="calibration_prepare"):
    document = build_report(store, report, actor=user.name)
    st.session_state["calibration_report"] = (settings, render_report(document))
prepared, files = st.session_state.get("calibration_report", (None, None))
if files and prepared == settings:
    kinds = {
        "report.html": "text/html",
        "report.md": "text/markdown",
        "report.json": "application/json",
    }
    for column, (name, text) in zip(st.columns(3), files.items(), strict=True):
        column.download_button(
            ui.fmt("Download {}", name),
            text,
            file_name=name,
            mime=kinds[name],
            key=f"calibration_download_{name}",
        )
