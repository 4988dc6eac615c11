"""Chapter 9 logic: the course's main judgements (cards linking back to chapters) and exercise progress.

Streamlit-free. Statuses are course.common.exercise_index.STATUSES (what status_of returns).
"""

from dataclasses import dataclass

import pandas as pd

from course.common import exercise_index
from course.common.exercise_index import STATUSES
from course.common.i18n import t


@dataclass(frozen=True)
class Card:
    key: str  # catalog key under ch09.cards
    pages: tuple  # page keys of the chapters the judgement comes from


CARDS = (
    Card("problem", ("ch01",)),
    Card("mechanism", ("ch02", "ch04")),
    Card("computation", ("ch03", "ch05", "ch06")),
    Card("learning", ("ch02", "ch04", "ch07")),
    Card("evolution", ("ch08",)),
    Card("limits", ("ch06", "ch04", "ch01")),
)


def card_links(card, available):
    """The card's chapter keys that are in `available` (pages whose file exists), in the card's order."""
    return [key for key in card.pages if key in set(available)]


def status_counts(statuses):
    """{status: how many exercises} for every status in STATUSES (zeros included)."""
    unknown = set(statuses.values()) - set(STATUSES)
    if unknown:
        raise ValueError(f"unknown exercise status {sorted(unknown)}; use one of {STATUSES}")
    return {status: sum(s == status for s in statuses.values()) for status in STATUSES}


def next_exercise(statuses):
    """The first exercise not passed whose prerequisites are all passed; None when all are passed."""
    open_ids = [ex.id for ex in exercise_index.EXERCISES if statuses.get(ex.id) != "passed"]
    for ex_id in open_ids:
        if all(statuses.get(need) == "passed" for need in exercise_index.get(ex_id).needs):
            return ex_id
    return open_ids[0] if open_ids else None


def progress_frame(statuses, results, lang, label=None, only_open=False):
    """One row per exercise: id, title, chapter, status (label(status) or its catalog word), score in %."""
    rows = []
    for ex in exercise_index.EXERCISES:
        status = statuses.get(ex.id, "not_graded")
        if only_open and status == "passed":
            continue
        record = results.get(ex.id) or {}
        score = exercise_index.saved_score(record)  # a stub not started: 0
        rows.append({
            t("ch09.progress.col_id", lang): ex.id,
            t("ch09.progress.col_title", lang): t(f"exercises.{ex.id}.title", lang),
            t("ch09.progress.col_chapter", lang): t(f"nav.{ex.chapter}", lang),
            t("ch09.progress.col_status", lang): label(status) if label else t(f"app.status.{status}", lang),
            t("ch09.progress.col_score", lang): None if score is None else round(100 * float(score), 1),
        })
    return pd.DataFrame(rows, columns=[t(f"ch09.progress.col_{c}", lang)
                                       for c in ("id", "title", "chapter", "status", "score")])


# Interview questions as review cards: a question, an answer with numbers the course computes.
INTERVIEW = (
    Card("sqrt_dk", ("ch03",)),
    Card("additive_vs_dot", ("ch03", "ch04", "ch08")),
    Card("quadratic", ("ch06", "ch10")),
    Card("versus_dense", ("ch02", "ch05", "ch06")),
)


def interview_numbers(d=64, n=1000, width=512, heads=8, dense_n=50):
    """The figures quoted in the interview answers, computed by the chapters' own functions."""
    from course.lessons import ch03, ch05, ch06  # the chapters the answers come from

    stats = ch03.scale_stats(d)
    counts = ch03.parameter_counts(d, d, d)
    costs = ch06.layer_costs(n, width, 3)
    return {
        "d": d, "var_unscaled": stats["unscaled"]["variance"], "var_scaled": stats["scaled"]["variance"],
        "max_unscaled": stats["unscaled"]["max_weight"], "max_scaled": stats["scaled"]["max_weight"],
        "additive_params": counts["additive"], "dot_params": counts["scaled"],
        "n": n, "width": width, "attention_ops": costs["self-attention"][0], "rnn_ops": costs["rnn"][0],
        "attention_total": 2 * costs["self-attention"][0], "rnn_total": 2 * costs["rnn"][0],
        "heads": heads, "attention_params": ch05.count_parameters(ch05.build_layer(d, heads)),
        "dense_n": dense_n, "dense_params": (dense_n * d) ** 2 + dense_n * d,
    }
