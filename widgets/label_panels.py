"""The Label page's panels around the claim: the rubric at hand, the keyboard overlay, the
reviewer's questions to the leads, and the claims to reopen. A reviewer sees only their own
questions and verdicts here: never another reviewer's or the judge's."""

from __future__ import annotations

import streamlit as st

import ui
from annotate.errors import AnnotateError, counted
from annotate.judge.rubrics.versions import get_rubric
from annotate.labelling.session import recent_verdicts, skipped_claims
from annotate.store import Store

# Ctrl+Enter (Cmd+Enter) in the note keeps it (Streamlit commits a text area on it) and leaves
# the field, so the next digit is a verdict again; `?` outside a text field opens the key list.
# Streamlit itself never fires a button's shortcut from inside a text field.
KEYS_SCRIPT = """<script>
if (!window.__annotateLabelKeys) {
  window.__annotateLabelKeys = true;
  const typing = t => t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
  document.addEventListener('keydown', e => {
    const t = e.target;
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && t && t.tagName === 'TEXTAREA'
        && t.getAttribute('aria-label') === 'Note (optional)') {
      setTimeout(() => t.blur(), 0);
    } else if (e.key === '?' && !typing(t)) {
      const help = [...document.querySelectorAll('button')]
        .find(b => b.innerText.trim().startsWith('? Keys'));
      if (help) { e.preventDefault(); help.click(); }
    }
  }, true);
}
</script>"""


def keyboard_script() -> None:
    st.html(KEYS_SCRIPT, unsafe_allow_javascript=True)


def rubric_sidebar(store: Store, labels: list[dict]) -> None:
    """The active rubric in the sidebar: it stays beside the claim while labelling."""
    try:
        rubric = get_rubric(store)
        error_types, instructions, version = (
            rubric.error_types,
            rubric.instructions,
            rubric.version,
        )
    except AnnotateError:
        error_types, instructions, version = [], "", None
    with st.sidebar.expander(ui.fmt("Rubric v{}", version or ""), expanded=True):
        for number, item in enumerate(labels, start=1):
            st.markdown(ui.fmt("**{} · {}**: {}", number, item["label"], item["definition"]))
        if error_types:
            st.caption(ui.fmt("Error types (unsupported labels only): {}", ", ".join(error_types)))
        if instructions:
            st.caption(ui.fmt("Instructions: {}", instructions))


@st.dialog("Keyboard shortcuts")
def shortcuts(labels: list[dict]) -> None:
    template = "\n".join(["- **{}**: {}"] * len(labels) + list(KEYS))  # ours; values escaped
    st.markdown(ui.fmt(template, *[v for n, i in enumerate(labels, 1) for v in (n, i["label"])]))


KEYS = (
    "- **B**: back to your last verdict (shows the label, note and error type you gave)",
    "- **S**: skip, with the reason shown on the button (chosen beside it)",
    "- **?**: this list",
    "- In the note and question fields keys only type: nothing is submitted.",
    "- **Ctrl+Enter** (Cmd+Enter) in the note keeps the note and returns to the verdict keys.",
)


def changing_notice(view) -> None:
    """Above a claim reopened by Back or Reopen: what a change does, or why there is none (the
    reviewer has seen the judge on its trace: annotate.labelling.blind)."""
    given = st.session_state.get("label_back") and st.session_state.get("label_given")
    if view.final:
        st.info(
            ui.fmt(
                "Your verdict **{}** on this claim is final: you have seen the judge's verdict "
                "on this trace, so a change could follow the judge. Ask a lead if it is wrong.",
                (given or {}).get("label", ""),
            )
        )
    elif given:
        st.warning(
            ui.fmt(
                "Changing your last verdict, which was **{}** · error type {} · note {}. "
                "The change is a new event; the old one stays.",
                given["label"],
                given["error_type"] or "none",
                given["note"] or "none",
            )
        )
    elif st.session_state.get("label_back") is not None:
        st.warning("Changing your last verdict: the new one is a new event; the old one stays.")


def claim_answers(mine: list[dict], view) -> None:
    """The reviewer's questions on this claim (from `my_questions`), and the answers to them."""
    for asked in mine:
        if (asked["trace_id"], asked["claim_index"]) != (view.trace_id, view.claim_index):
            continue
        st.caption(ui.fmt("Your question: {}", asked["question"]))
        if asked["answer"]:
            st.info(ui.fmt("Lead's answer: {}", asked["answer"]))
        else:
            st.caption("Not answered yet.")


def ask_box(desk, view, shown: str) -> None:
    box = ui.opened("label_ask_box")  # its toggle: Desk.moves
    if box is None:
        return
    with box:
        st.text_area(
            "Your question (the lead sees it with the claim and its context)",
            key="label_question",
            height=80,
        )
        st.button(
            "Send the question",
            key=f"label_ask_{shown}",
            on_click=ui.guard(desk.ask),
            args=(view,),
        )
        if st.session_state.pop("label_asked", False):
            st.caption("Sent. The answer shows here and under Your questions.")


def my_questions_list(asked: list[dict]) -> None:
    if not asked:
        return
    answered = sum(1 for q in asked if q["answer"])
    box = ui.lazy_panel(
        ui.fmt("Your questions ({} answered, {} open)", answered, len(asked) - answered),
        "label_questions_box",
    )
    if box is None:
        return
    with box:
        for q in asked:
            st.markdown(
                ui.fmt(
                    "**{}** (claim {} of {})", q["question"], q["claim_index"] + 1, q["trace_id"]
                )
            )
            st.caption(ui.fmt("Answer: {}", q["answer"]) if q["answer"] else "Not answered yet.")


def revisit(store: Store, desk) -> None:
    """The last 20 verdicts and the skipped claims, any of which can be opened again. Read
    only while the panel is open: two queries fewer on every verdict."""
    box = ui.opened("label_revisit")  # its toggle: Desk.moves
    if box is None:
        return
    recent = recent_verdicts(store, desk.user.name, desk.sample)
    skipped = skipped_claims(store, desk.user.name, desk.sample)
    if not recent and not skipped:
        box.caption("Nothing to reopen yet: no skipped claims and no verdicts in this sample.")
        return
    options = [("skipped", s) for s in skipped] + [("verdict", r) for r in recent]

    def name(i: int) -> str:
        kind, row = options[i]
        said = f"skipped ({row['reason']})" if kind == "skipped" else row["label"]
        return f"{said} · {row['trace_id']} #{row['claim_index'] + 1} · {row['claim'][:70]}"

    with box:
        box.caption(
            ui.fmt("{} skipped, your last {}", len(skipped), counted(len(recent), "verdict"))
        )
        pick = st.selectbox("Claim", range(len(options)), format_func=name, key="label_reopen_pick")
        st.button(
            "Reopen",
            key="label_reopen",
            on_click=ui.guard(desk.reopen),
            args=(options[pick][1]["trace_id"], options[pick][1]["claim_index"]),
        )
