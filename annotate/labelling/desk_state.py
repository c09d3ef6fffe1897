"""What a reviewer's Label desk holds between key presses: their queue, the traces of the
claims ahead, their questions and the settings a press uses.

Held per browser session and read again only when the store's desk mark moves
(annotate.store.labels.desk_mark), never on every press: a press then costs its verdict's
write and one look at the mark. A trace is read once, with the next few of the queue in the
same statement, and the ones ahead are read while the reviewer reads the current claim
(`prepare`). Blind like the session it serves: nothing here holds a judge verdict or another
reviewer's label before the reviewer's own. No Streamlit here.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from annotate.errors import AnnotateError
from annotate.labelling import blind
from annotate.labelling.questions import my_questions
from annotate.labelling.session import ClaimView, LabelError, Stored, min_dwell
from annotate.store import Store
from annotate.store import assignments as queue_sql
from annotate.store import labels as sql

CHUNK = 10  # traces read in one statement: one scan of contexts and claims serves them all
AHEAD = 2  # traces after the current one that should be ready before the reviewer gets there
LABELS, SKIPS = 1, 2  # places in the desk mark of the reviewer's own label and skip counts


class DeskState:
    """One reviewer at one sample, as their browser session last read it."""

    def __init__(self, reviewer: str, sample: str) -> None:
        self.reviewer, self.sample = reviewer, sample
        self.mark: tuple[Any, ...] | None = None
        self.items: list[dict[str, Any]] = []
        self.traces: dict[str, dict[str, Any]] = {}
        self.questions: list[dict[str, Any]] = []
        self.min_dwell = timedelta(0)
        self.reveal = False
        self.shown_judge: dict[str, list[dict[str, Any]]] = {}
        self._reading = threading.Lock()  # one read of traces at a time (a draw or `prepare`)
        self._generation = 0  # a read begun before the desk was read again is dropped
        self._checked = False  # the mark was read by this session's verdict just now
        self._preparing: threading.Thread | None = None

    def refresh(self, store: Store) -> bool:
        """Read the desk again if the mark moved since the last read; True when it did. Right
        after a verdict of this session the mark its write read serves (`stored`)."""
        if self._checked:
            self._checked = False
            return False
        mark = sql.desk_mark(store, self.reviewer)
        if mark == self.mark:
            return False
        self.items = queue_sql.queue(store, self.reviewer, self.sample)
        self.questions = my_questions(store, self.reviewer)
        self.min_dwell = min_dwell(store)
        self.reveal = blind.reveal_allowed(store)
        self.traces, self.shown_judge = {}, {}  # claims may have been revised
        self._generation += 1
        self.mark = mark
        return True

    def next_view(self, store: Store) -> ClaimView | None:
        """The first claim in the reviewer's order with no verdict and no skip; None when done.
        Its shown_at is now: the view is made when it is drawn."""
        for position, item in enumerate(self.items, start=1):
            if item["label"] is None and not item["skipped"]:
                return self.view(store, item["trace_id"], item["claim_index"], position)
        return None

    def view(self, store: Store, trace_id: str, claim_index: int, position: int = 0) -> ClaimView:
        trace = self.trace(store, trace_id)
        claim = next((c for c in trace["claims"] if c["claim_index"] == claim_index), None)
        if claim is None:
            raise LabelError(f"trace {trace_id!r} has no claim {claim_index}")
        return ClaimView(trace_id, claim_index, claim, trace, position, len(self.items))

    def trace(self, store: Store, trace_id: str) -> dict[str, Any]:
        """The trace's row, contexts and claims (never its judge verdicts), read at most once
        while the desk's mark stands, with the next traces of the queue."""
        if trace_id not in self.traces:
            with self._reading:
                if trace_id not in self.traces:
                    self._read(store, [trace_id, *self._ahead(trace_id, CHUNK)], self._generation)
        if trace_id not in self.traces:
            raise LabelError(f"no trace {trace_id!r}")
        return self.traces[trace_id]

    def _read(self, store: Store, trace_ids: list[str], generation: int) -> None:
        wanted = [t for t in dict.fromkeys(trace_ids) if t not in self.traces]
        found = sql.blind_traces(store, wanted)
        if generation == self._generation:
            self.traces = {**self._kept(trace_ids), **found}

    def _kept(self, wanted: list[str]) -> dict[str, dict[str, Any]]:
        """The traces held that are still ahead of the reviewer (or about to be read with)."""
        ahead = set(wanted) | {item["trace_id"] for item in self._open()}
        return {t: detail for t, detail in self.traces.items() if t in ahead}

    def _open(self) -> list[dict[str, Any]]:
        return [i for i in self.items if i["label"] is None and not i["skipped"]]

    def _ahead(self, trace_id: str | None, count: int) -> list[str]:
        """The next `count` traces of the queue with an open claim, after `trace_id`."""
        order = list(dict.fromkeys(item["trace_id"] for item in self._open()))
        start = order.index(trace_id) + 1 if trace_id in order else 0
        return order[start : start + count]

    def prepare(self, store: Store, current: ClaimView | None) -> None:
        """Read the traces ahead of `current` in the background if the next ones are not held:
        called once the current claim is drawn, so the next press finds its trace read."""
        ahead = self._ahead(current.trace_id if current else None, CHUNK)
        if all(t in self.traces for t in ahead[:AHEAD]):
            return
        if self._preparing is not None and self._preparing.is_alive():
            return
        self._preparing = threading.Thread(
            target=self._prepare, args=(store.session(), ahead, self._generation), daemon=True
        )
        self._preparing.start()

    def _prepare(self, cursor: Store, ahead: list[str], generation: int) -> None:
        try:
            with self._reading:
                self._read(cursor, ahead, generation)
        except AnnotateError:
            pass  # only a head start: the draw reads what is missing, and says what failed
        finally:
            cursor.close()

    def stored(self, view: ClaimView, label: str, done: Stored) -> None:
        """The reviewer's verdict on `view`'s claim was committed (by this session); the mark
        its write read tells whether anything else moved (then the next draw reads again)."""
        self._set(view, "label", label)
        self._checked = done.mark == self.mark
        if done.inserted:
            self._count(LABELS)

    def skipped(self, view: ClaimView, inserted: bool) -> None:
        self._set(view, "skipped", True)
        if inserted:
            self._count(SKIPS)

    def _set(self, view: ClaimView, name: str, value: Any) -> None:
        for item in self.items:
            if (item["trace_id"], item["claim_index"]) == (view.trace_id, view.claim_index):
                item[name] = value

    def _count(self, place: int) -> None:
        """This session's own event, counted in the mark: it does not make the desk read all
        again (another tab's event still does: the count then differs by more)."""
        if self.mark is not None:
            mark = list(self.mark)
            mark[place] = int(mark[place] or 0) + 1
            self.mark = tuple(mark)

    def progress(self) -> dict[str, int]:
        done = sum(1 for item in self.items if item["label"] is not None or item["skipped"])
        skipped = sum(1 for item in self.items if item["skipped"])
        return {"done": done, "assigned": len(self.items), "skipped": skipped}

    def judge_feedback(self, store: Store, view: ClaimView) -> list[dict[str, Any]]:
        """The judge on `view`'s trace once the reviewer has labelled every claim of it, if a
        lead allows it (annotate.labelling.blind decides and records the reveal); asked once a
        trace while the mark stands."""
        if not self.reveal:
            return []
        if view.trace_id not in self.shown_judge:
            claims = [i for i in self.items if i["trace_id"] == view.trace_id]
            if any(item["label"] is None for item in claims):
                return []  # a flagged or skipped claim is no label: nothing is asked
            self.shown_judge[view.trace_id] = blind.reveal_judge(
                store, self.reviewer, view.trace_id
            )
        return self.shown_judge[view.trace_id]
