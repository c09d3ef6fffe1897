"""The Rubric page's lead controls: run the judge (estimate, progress, cancel), edit a version,
pick few-shot examples from adjudicated tuning claims, mark a version calibrated."""

from __future__ import annotations

import threading

import pandas as pd
import streamlit as st

import ui
from annotate.errors import AnnotateError, counted
from annotate.judge.rubrics.loop import few_shot_candidates, mark_calibrated, not_ready_reason
from annotate.judge.rubrics.outcomes import run_outcome, unfinished_run
from annotate.judge.rubrics.render import card_markdown
from annotate.judge.rubrics.runner import estimate_text, plan_run, run_judge
from annotate.judge.rubrics.split import ensure_split
from annotate.judge.rubrics.versions import (
    BASELINE_MODEL,
    GRANULARITIES,
    edit_rubric,
    list_rubrics,
    make_current,
)
from annotate.store import Store

MODES = {
    "llm": "LLM judge",
    "batch": "LLM judge, Message Batches (half price)",
    "baseline": "offline baseline",
}
RUN_KEY = "rubric_run_cancel"


def run_controls(store: Store, rubric, samples: list[str], user) -> None:
    """Estimate, then run with progress; a click on Cancel (any rerun) stops after the calls
    in flight, and the run is recorded as cancelled; a rerun resumes."""
    if not samples:
        st.info("Draw a sample and label some claims first.")
        return
    left, middle, right = st.columns(3)
    sample = left.selectbox("Sample", samples, key="rubric_run_sample")
    mode = middle.selectbox("Judge", list(MODES), format_func=MODES.get, key="rubric_run_mode")
    concurrency = right.number_input("Concurrency", 1, 64, 8, key="rubric_run_concurrency")
    model = BASELINE_MODEL if mode == "baseline" else None
    try:
        plan = plan_run(store, sample, rubric.version, model, batch=mode == "batch").report
    except AnnotateError as exc:
        ui.show_error(exc)
        return
    st.caption(
        ui.fmt(
            "{}: {} claims to judge in {} calls ({} already judged, {} few-shot never scored); "
            "estimate {}",
            plan.judge, plan.to_judge, plan.calls, plan.already_done, plan.few_shot_excluded,
            estimate_text(plan.estimate),
        )
    )  # fmt: skip
    stopped = unfinished_run(store, plan.judge, sample)
    if stopped and plan.to_judge:
        st.caption(ui.fmt("The last run: {}. Run the judge resumes it.", run_outcome(stopped)))
    if st.button("Run the judge", key="rubric_run", disabled=not plan.to_judge):
        cancel = threading.Event()
        st.button("Cancel", key="rubric_cancel", on_click=ui.guard(cancel.set))
        bar = st.progress(0.0, text="starting")

        def progress(done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=ui.fmt("{} of {} calls", done, total))

        try:
            report = run_judge(
                store, sample, rubric.version, model=model, concurrency=int(concurrency),
                batch=mode == "batch", progress=progress, cancel=cancel, poll_seconds=10,
                actor=user.name,
            )  # fmt: skip
        except AnnotateError as exc:
            ui.show_error(exc)
            return
        st.success(
            ui.fmt(
                "{}: {}, {} failed", report.status, counted(report.judged, "verdict"), report.failed
            )
        )
        if report.failures:
            st.dataframe(pd.DataFrame(report.failures), hide_index=True, key="rubric_failures")


def editor(store: Store, rubric, user) -> None:
    with st.form("rubric_edit_form"):
        instructions = st.text_area("Instructions", rubric.instructions, key="rubric_edit_text")
        model = st.text_input("Judge model id", rubric.model, key="rubric_edit_model")
        granularity = st.selectbox(
            "Granularity", GRANULARITIES, index=GRANULARITIES.index(rubric.granularity),
            key="rubric_edit_granularity",
        )  # fmt: skip
        note = st.text_input("Why this version", key="rubric_edit_note")
        saved = st.form_submit_button("Save as a new version")
    if saved:
        changes = {"instructions": instructions, "model": model.strip(), "granularity": granularity}
        try:
            _save(store, rubric, changes, user, note or None)
        except AnnotateError as exc:
            ui.show_error(exc)
    if st.button("Make this version current", key="rubric_make_current"):
        make_current(store, rubric.version, user.name)
        st.rerun()


def _save(store: Store, rubric, changes: dict, user, note: str | None) -> None:
    """A new version, or the one that already holds exactly this content: say which."""
    newest = max(r.version for r in list_rubrics(store))
    new = edit_rubric(store, rubric.version, changes, user.name, note)
    if new.version > newest:
        st.success(ui.fmt("Saved as version {}", new.version))
    else:
        st.info(ui.fmt("Nothing new to save: version {} already says exactly this.", new.version))


def few_shot_picker(store: Store, rubric, samples: list[str], user) -> None:
    """Adjudicated claims of the tuning part, the judge's past errors first."""
    with st.expander("Few-shot examples (adjudicated tuning claims; never scored)"):
        sample = st.selectbox("From sample", samples, key="rubric_shot_sample")
        if not sample:
            return
        ensure_split(store, sample, actor=user.name)
        candidates = few_shot_candidates(store, sample, rubric.judge_name())
        if not candidates:
            st.info("No adjudicated claim in the tuning part yet.")
            return
        frame = pd.DataFrame(candidates)[
            ["trace_id", "claim_index", "claim", "label", "judge_error"]
        ]
        st.dataframe(frame, hide_index=True, key="rubric_shot_candidates")
        picked = st.multiselect(
            "Examples", range(len(candidates)),
            format_func=lambda i: f"{candidates[i]['trace_id']} · claim {candidates[i]['claim_index'] + 1}",
            key="rubric_shot_pick",
        )  # fmt: skip
        for i in picked:
            ui.show_text("Context excerpt", candidates[i]["context_excerpt"])
        if picked and st.button(
            "Save as a new version with these examples", key="rubric_shot_save"
        ):
            shots = [{k: v for k, v in candidates[i].items() if k != "judge_error"} for i in picked]
            _save(store, rubric, {"few_shot": shots}, user, "few-shot")


def mark_controls(store: Store, rubric, samples: list[str], user) -> None:
    with st.expander("Mark calibrated (slices meeting the Calibration page's thresholds)"):
        sample = st.selectbox("On the held-out part of", samples, key="rubric_mark_sample")
        if sample and st.button("Mark calibrated", key="rubric_mark"):
            try:
                found = mark_calibrated(store, rubric.judge_name(), sample, actor=user.name)
            except AnnotateError as exc:
                ui.show_error(exc)
                return
            reason = not_ready_reason(found)
            if reason is None:
                st.success(ui.fmt("Calibrated for {}", counted(len(found["slices"]), "slice")))
                return
            st.warning(ui.md(ui.app_text(reason)))  # the card below says why, slice by slice
            st.code("\n".join(card_markdown(found["card"])), language="markdown")
