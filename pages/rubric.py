"""Rubric: versions side by side, the judge runs, the calibration card, the lead's loop."""

import pandas as pd
import streamlit as st

import ui
from annotate.judge.llm import has_api_key
from annotate.judge.rubrics.card import card_status
from annotate.judge.rubrics.exchange import export_markdown, export_yaml
from annotate.judge.rubrics.loop import calibrated_marks
from annotate.judge.rubrics.render import card_markdown
from annotate.judge.rubrics.versions import current_version, get_rubric, list_rubrics
from annotate.sampling.samples import list_samples
from widgets import downloads
from widgets import rubric as rubric_widgets
from widgets import rubric_compare as compare_widgets

user = ui.require_role("lead", "auditor")
store = ui.store()
is_lead = user.role == "lead"
st.title("Rubric and our judge")

rubrics = list_rubrics(store)
current = current_version(store)
st.dataframe(
    pd.DataFrame(
        [
            {
                "version": r.version,
                "current": r.version == current,
                "model": r.model,
                "granularity": r.granularity,
                "few-shot": len(r.few_shot),
                "parent": r.parent,
                "by": r.created_by,
                "note": r.note,
                "calibrated": bool(calibrated_marks(store, r.version)),
            }
            for r in rubrics
        ]
    ),
    hide_index=True,
    key="rubric_versions",
)
versions = [r.version for r in rubrics]
version = st.selectbox(
    "Version",
    versions,
    index=versions.index(current) if current in versions else 0,
    format_func=lambda v: f"v{v}" + (" (current)" if v == current else ""),
    key="rubric_version",
)
rubric = get_rubric(store, version)
samples = [s["name"] for s in list_samples(store)]

st.subheader(ui.fmt("Version {}", rubric.version))
ui.show_text("Instructions", rubric.instructions)
st.dataframe(pd.DataFrame(rubric.labels), hide_index=True, key="rubric_labels")
st.caption(
    ui.fmt(
        "model {} · granularity {} · error types: {}",
        rubric.model,
        rubric.granularity,
        ", ".join(rubric.error_types),
    )
)

st.subheader("Calibration card")
marks = calibrated_marks(store, version)
if not marks:
    st.info("Not marked calibrated. Run the judge on a sample, then mark it where it is ready.")
for mark in marks[-1:]:
    status = card_status(store, mark["card"])
    if status["stale"]:
        st.error(ui.md(status["status"]))
    else:
        st.success(ui.fmt("Fresh: fingerprint {}", mark["fingerprint"]))
    st.code("\n".join(card_markdown(mark["card"], status)), language="markdown")
left, right = st.columns(2)
downloads.download_button(
    "Download YAML",
    lambda: export_yaml(store, version),
    file_name=f"rubric-v{version}.yaml",
    mime="application/yaml",
    key="rubric_download_yaml",
    where=left,
)
downloads.download_button(
    "Download Markdown",
    lambda: export_markdown(store, version),
    file_name=f"rubric-v{version}.md",
    mime="text/markdown",
    key="rubric_download_md",
    where=right,
)

st.subheader("Judge runs and their spend")
compare_widgets.runs_spend(store, version)

if is_lead:
    st.subheader("Run the judge")
    if not has_api_key():
        st.info(
            "No ANTHROPIC_API_KEY: the LLM judge cannot run here. The offline baseline judge "
            "(numbers, dates and names against the context) and everything else still work."
        )
    rubric_widgets.run_controls(store, rubric, samples, user)
    st.subheader("Edit: a new version")
    rubric_widgets.editor(store, rubric, user)
    rubric_widgets.few_shot_picker(store, rubric, samples, user)
    rubric_widgets.mark_controls(store, rubric, samples, user)
else:
    st.caption("Auditors read rubrics and cards; only a lead edits or runs the judge.")

st.subheader("Versions side by side")
compare_widgets.side_by_side(store, samples)
