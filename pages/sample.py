"""Sample: choose filters, strata and allocation, see the plan, draw, and list samples."""

import streamlit as st

import ui
from annotate.errors import AnnotateError, counted
from annotate.rates.active import draw_active_sample, is_active, top_up_active
from annotate.report import charts
from annotate.sampling.active import ACTIVE
from annotate.sampling.allocation import ALLOCATIONS, DEFAULT_BY, SampleSpec, parse_where
from annotate.sampling.samples import draw_sample, list_samples, plan_sample, top_up
from annotate.sampling.tables import plan_frame, samples_frame
from annotate.store.rates import judge_verdict_counts
from annotate.store.samples import attribute_names
from widgets import claims, path

user = ui.require_role("lead")
st.title("Sample")
st.caption(
    "A seeded, stratified random draw of judgeable traces. Every later number knows how it "
    "was drawn: each trace keeps its stratum, inclusion probability and weight."
)

try:
    store = ui.store()
    attributes = attribute_names(store)
    judges = [name for name, _ in judge_verdict_counts(store)]
except AnnotateError as exc:
    ui.show_error(exc)
    st.stop()

with st.form("sample_form"):
    left, right = st.columns(2)
    name = left.text_input("Sample name", key="sample_name")
    n = left.number_input("Traces to draw (n)", min_value=1, value=200, step=10, key="sample_n")
    seed = left.number_input("Seed", min_value=0, value=7, step=1, key="sample_seed")
    by = right.multiselect(
        "Strata",
        ["feature", "risk_category", "model", *attributes],
        default=list(DEFAULT_BY),
        key="sample_by",
    )
    allocation = right.selectbox(
        "Allocation",
        [a for a in ALLOCATIONS if a != "explicit"] + [ACTIVE],
        key="sample_allocation",
    )
    judge = right.selectbox("Judge (active: n is the labels expected)", judges, key="sample_judge")
    minimum = right.number_input("Minimum per stratum", min_value=0, value=1, key="sample_min")
    where = st.text_area(
        "Filters, one NAME=VALUE[,VALUE] a line (feature, risk_category, model, since, until, "
        "judge, or an attribute)",
        key="sample_where",
    )
    planned = st.form_submit_button("Show the plan")


def _spec() -> SampleSpec:
    return SampleSpec(
        name=name.strip(),
        n=int(n),
        by=tuple(by),
        allocation=allocation,
        min_per_stratum=int(minimum),
        seed=int(seed),
        filters=parse_where([line for line in where.splitlines() if line.strip()]),
    )


if planned:
    try:
        st.session_state["sample_plan"] = (
            draw_active_sample(store, _spec(), [judge], plan_only=True).plan
            if allocation == ACTIVE
            else plan_sample(store, _spec())
        )
    except AnnotateError as exc:
        st.session_state.pop("sample_plan", None)
        ui.show_error(exc)

plan = st.session_state.get("sample_plan")
if plan is not None:
    st.subheader(ui.fmt("Plan: {} of {} traces", plan.total, plan.frame_size))
    st.caption(
        ui.fmt(
            "Excluded from the frame: {}", ", ".join(f"{k} {v}" for k, v in plan.excluded.items())
        )
    )
    frame = plan_frame(plan)
    ui.chart(charts.stratum_share_chart, frame)
    st.dataframe(frame, hide_index=True)
    if st.button(ui.fmt("Draw sample {}", plan.spec.name), type="primary", key="sample_draw"):
        try:
            drawn = (
                draw_active_sample(store, plan.spec, [judge], created_by=user.name).plan
                if allocation == ACTIVE
                else draw_sample(store, plan.spec, created_by=user.name, plan=plan)
            )
            st.session_state.pop("sample_plan", None)
            st.session_state["sample_drawn"] = ui.fmt(
                "Drew {} into {} (seed {}). Next: make their claims below.",
                counted(len(drawn.trace_ids), "trace"),
                drawn.spec.name,
                drawn.spec.seed,
            )
            st.session_state["sample_claims_sample"] = drawn.spec.name
            st.rerun()  # the plan and its Draw button go; the result and the next step show
        except AnnotateError as exc:
            ui.show_error(exc)

drawn_message = st.session_state.pop("sample_drawn", None)
if drawn_message:
    st.success(drawn_message)
st.subheader("Samples")
samples = list_samples(store)
if not samples:
    st.caption("No samples yet: fill in the form above, show the plan, then draw.")
else:
    st.dataframe(
        samples_frame(samples),
        hide_index=True,
        key="sample_list",
    )
    left, right = st.columns([3, 1])
    target = left.selectbox("Top up", [s["name"] for s in samples], key="sample_topup_name")
    extra = right.number_input("More traces", min_value=1, value=50, key="sample_topup_n")
    if st.button("Draw more", key="sample_topup"):
        try:
            more = (
                top_up_active(store, target, int(extra), user.name).plan  # from the gold so far
                if is_active(store, target)
                else top_up(store, target, int(extra), created_by=user.name)
            )
            st.success(
                ui.fmt(
                    "Added {} to {}; weights updated.",
                    counted(len(more.trace_ids), "trace"),
                    target,
                )
            )
        except AnnotateError as exc:
            ui.show_error(exc)
    names = [s["name"] for s in samples]
    if st.session_state.get("sample_claims_sample") not in names:  # the newest, until one is picked
        st.session_state["sample_claims_sample"] = names[-1]
    claims_for = st.selectbox("Claims of sample", names, key="sample_claims_sample")
    claims.make_claims(store, user, claims_for)
    path.show_next_for(claims_for)
