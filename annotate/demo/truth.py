"""The truth file's rows: the label of every claim of a sample trace, and whether the demo
judge's verdict on it was right. For tests only; the app never reads it.
"""

from __future__ import annotations

from annotate.demo.content import Sentence


def truth_rows(
    trace_id: str, sentences: list[Sentence], spans: list[tuple[int, int]], judge_labels: list
) -> list[dict]:
    rows = []
    for index, (sentence, span, judge_label) in enumerate(
        zip(sentences, spans, judge_labels, strict=True)
    ):
        rows.append(
            {
                "trace_id": trace_id,
                "claim": index,
                "text": sentence.text,
                "start": span[0],
                "end": span[1],
                "label": sentence.label,
                "error_type": sentence.error_type,
                "judge_label": judge_label,
                "judge_correct": judge_correct(sentence.label, judge_label),
            }
        )
    return rows


def judge_correct(label: str, judge_label: str | None) -> bool | None:
    """Whether the judge's binary call matches the truth; None when not comparable."""
    if judge_label is None or label == "not_a_claim":
        return None
    return (judge_label == "unsupported") == (label != "supported")
