"""Questions: what reviewers asked about a claim, with the claim and its context; a lead answers.

The answer shows on the reviewer's Label page, beside that claim and under their questions.
"""

import streamlit as st

import ui
from annotate.errors import AnnotateError
from annotate.labelling.questions import all_questions, answer_question
from annotate.labelling.session import claim_view
from widgets import claim_display

user = ui.require_role("lead")
store = ui.store()
st.title("Questions from reviewers")

if "questions_sent" in st.session_state:
    st.success(ui.fmt("Answer sent to {}.", st.session_state.pop("questions_sent")))
asked = all_questions(store)
waiting = [q for q in asked if not q["answer"]]
answered = [q for q in asked if q["answer"]]
st.caption(ui.fmt("{} open · {} answered", len(waiting), len(answered)))
if not asked:
    st.info(
        "No questions yet. Reviewers ask from the Label page (Ask the lead about this claim); "
        "their questions appear here."
    )
    st.stop()

show_answered = st.toggle("Show answered questions too", key="questions_all")
listed = asked if show_answered else waiting
if not listed:
    st.success("Every question has an answer.")
    st.stop()


def title(i: int) -> str:
    q = listed[i]
    state = "answered" if q["answer"] else "open"
    return f"{state} · {q['reviewer']} · {q['trace_id']} #{q['claim_index'] + 1} · {q['question'][:60]}"


pick = st.selectbox("Question", range(len(listed)), format_func=title, key="questions_pick")
q = listed[pick]
st.subheader(ui.fmt("{} asks", q["reviewer"]))
st.markdown(ui.fmt("> {}", q["question"]))
st.caption(
    ui.fmt("asked {} · sample {}", f"{q['asked_at']:%Y-%m-%d %H:%M}", q["sample"] or "(none)")
)
if q["answer"]:
    st.info(ui.fmt("Answered by {}: {}", q["answered_by"], q["answer"]))


def send(question_id: int) -> None:
    try:
        answer_question(store, question_id, st.session_state.get("questions_answer", ""), user.name)
    except AnnotateError as exc:
        st.session_state["questions_error"] = str(exc)
        return
    st.session_state["questions_answer"] = ""
    st.session_state["questions_sent"] = q["reviewer"]


st.text_area(
    "Answer again (the latest answer is shown)" if q["answer"] else "Your answer",
    key="questions_answer",
)
st.button(
    "Send the answer",
    type="primary",
    key="questions_send",
    on_click=ui.guard(send),
    args=(q["id"],),
)
if "questions_error" in st.session_state:
    ui.show_error(AnnotateError(st.session_state.pop("questions_error")))

st.divider()
try:
    claim_display.show_claim(claim_view(store, q["trace_id"], q["claim_index"]))
except AnnotateError as exc:
    ui.show_error(exc)
