"""Claims in the app: make the claims of a sample's traces (Sample page), and fix a flagged
claim as a new version (Adjudicate page). The work is in annotate.claims."""

from __future__ import annotations

import pandas as pd
import streamlit as st

import ui
from annotate.claims.extraction import (
    ClaimSpan,
    claim_flags,
    claims_for_trace,
    claims_todo,
    create_claims,
    estimate_llm_cost,
)
from annotate.claims.versions import correct_claim, merge_claims, split_claim
from annotate.errors import AnnotateError, counted
from annotate.judge import llm
from annotate.store import Store
from annotate.store.status import trace_detail

SENTENCES, LLM = "Split each response into sentences (offline)", "Extract with an LLM"
MESSAGE_KEY = "claims_message"


def make_claims(store: Store, user, sample: str) -> None:
    """How many of the sample's traces have no claims, and a button that makes them."""
    try:
        todo = len(claims_todo(store, sample))
    except AnnotateError as exc:
        ui.show_error(exc)
        return
    st.subheader("Claims")
    done = st.session_state.pop(MESSAGE_KEY, None)
    if done:
        st.success(ui.md(done))
    if not todo:
        st.caption(ui.fmt("Every trace of {} has its claims.", sample))
        return
    st.warning(
        ui.fmt(
            "{} of {} without claims yet: reviewers have nothing to label on them.",
            counted(todo, "trace"),
            sample,
        )
    )
    ways = [SENTENCES, LLM] if llm.has_api_key() else [SENTENCES]
    way = st.radio("How", ways, key="sample_claims_way", horizontal=True)
    if not llm.has_api_key():
        st.caption("LLM extraction needs an Anthropic API key in the app's environment.")
    if way == LLM:
        cost = estimate_llm_cost(store, sample)
        price = "unknown price" if cost["usd"] is None else f"about ${cost['usd']:.2f}"
        st.caption(
            ui.fmt(
                "{} to {}: about {} input and {} output tokens, {} (an upper bound).",
                counted(cost["calls"], "call"),
                cost["model"],
                f"{cost['input_tokens']:,}",
                f"{cost['output_tokens']:,}",
                price,
            )
        )
    if st.button("Make claims", type="primary", key="sample_make_claims"):
        _run(store, user, sample, "llm" if way == LLM else "sentences")


def _run(store: Store, user, sample: str, extractor: str) -> None:
    bar = st.progress(0.0, text="making claims…")

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=ui.fmt("{} of {} traces", done, total))

    try:
        report = create_claims(store, sample, extractor, progress=progress, actor=user.name)
    except AnnotateError as exc:
        bar.empty()
        ui.show_error(exc)
        return
    bar.empty()
    message = (
        f"Made {counted(report.created, 'claim')} for "
        f"{counted(report.traces - report.already_had, 'trace')} ({report.extractor}); "
        f"{report.failed:,} failed; {counted(report.without_claims, 'trace')} still without claims."
    )
    st.session_state[MESSAGE_KEY] = message
    st.rerun()


# --- fixing flagged claims ---------------------------------------------------------------


def fix_flagged(store: Store, user, sample: str) -> None:
    """Flagged claims still current; the lead splits, merges or corrects one."""
    flags = claim_flags(store, sample)
    done = st.session_state.pop("adjudicate_fix_message", None)
    if done:
        st.success(ui.md(done))
    open_flags = [f for f in flags if f["status"] == "open"]
    if not flags:
        return
    with st.expander(ui.fmt("{} flagged claims, {} still to fix", len(flags), len(open_flags))):
        st.dataframe(pd.DataFrame(flags), hide_index=True, key="adjudicate_flags")
        if open_flags:
            _fix_form(store, user, open_flags)


def _fix_form(store: Store, user, open_flags: list[dict]) -> None:
    keys = list(dict.fromkeys((f["trace_id"], f["claim_index"]) for f in open_flags))
    trace_id, index = st.selectbox(
        "Flagged claim",
        keys,
        format_func=lambda k: f"{k[0]} · claim {k[1] + 1}",
        key="adjudicate_fix_claim",
    )
    claims = {c["index"]: c for c in claims_for_trace(store, trace_id)}
    claim = claims[index]
    detail = trace_detail(store, trace_id, judge=False)
    ui.show_text("Response", detail["response"] if detail else "")
    ui.show_text("Flagged claim", claim["text"])
    action = st.radio(
        "Fix", ["Split", "Merge", "Correct"], horizontal=True, key="adjudicate_fix_action"
    )
    with st.form("adjudicate_fix_form"):
        if action == "Split":
            text = st.text_area(
                "The new claims, one a line", claim["text"], key="adjudicate_fix_split"
            )
        elif action == "Merge":
            others = [i for i in claims if i != index]
            merged = st.multiselect(
                "Merge with",
                others,
                format_func=lambda i: claims[i]["text"],
                key="adjudicate_fix_with",
            )
            text = st.text_area("The merged claim", claim["text"], key="adjudicate_fix_merged")
        else:
            text = st.text_input("The corrected claim", claim["text"], key="adjudicate_fix_text")
            start = st.number_input(
                "Start offset in the response (blank: find the text)",
                value=None,
                min_value=0,
                key="adjudicate_fix_start",
            )
            end = st.number_input("End offset", value=None, min_value=0, key="adjudicate_fix_end")
        submitted = st.form_submit_button("Save as a new version", type="primary")
    if not submitted:
        return
    try:
        if action == "Split":
            parts = [ClaimSpan(line, None, None) for line in text.splitlines() if line.strip()]
            revision = split_claim(store, trace_id, index, parts, user.name)
        elif action == "Merge":
            revision = merge_claims(
                store, trace_id, [index, *merged], ClaimSpan(text, None, None), user.name
            )
        else:
            span = ClaimSpan(
                text, None if start is None else int(start), None if end is None else int(end)
            )
            revision = correct_claim(store, trace_id, index, span, user.name)
    except AnnotateError as exc:
        ui.show_error(exc)
        return
    st.session_state["adjudicate_fix_message"] = (
        f"Saved: claims {', '.join(str(i + 1) for i in revision.retired)} of {trace_id} replaced by "
        f"{', '.join(str(i + 1) for i in revision.created)}. Their labels stay in the ledger; "
        "the new claims are in the reviewers' queues."
    )
    st.rerun()
