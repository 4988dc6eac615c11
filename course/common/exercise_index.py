"""The exercises: ids, files, the chapter each belongs to and what it builds on.

One table shared by the grader, the app and the notebook export. Titles and
descriptions are in the text catalogs under `exercises.<id>`.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    id: str  # "ex03"
    module: str  # file name without .py, the same in exercises/ and solutions/
    chapter: str  # page key of the chapter that teaches it, e.g. "ch03"
    needs: tuple  # ids of earlier exercises it imports
    names: tuple  # public names the learner's file must define

    @property
    def filename(self):
        return f"{self.module}.py"


EXERCISES = (
    Exercise("ex00", "ex00_paths", "ch01", (), ("receptive_field", "max_path_length")),
    Exercise("ex01", "ex01_softmax", "ch03", (), ("softmax", "masked_softmax")),
    Exercise(
        "ex02", "ex02_nadaraya_watson", "ch02", ("ex01",),
        ("gaussian_kernel_weights", "nadaraya_watson", "NWKernelRegression"),
    ),
    Exercise("ex03", "ex03_scoring", "ch03", ("ex01",), ("AdditiveAttention", "DotProductAttention")),
    Exercise("ex04", "ex04_bahdanau", "ch04", ("ex01", "ex03"), ("Seq2SeqAttentionDecoder",)),
    Exercise(
        "ex05", "ex05_multihead", "ch05", ("ex01", "ex03"),
        ("transpose_qkv", "transpose_output", "MultiHeadAttention"),
    ),
    Exercise("ex06", "ex06_positional_encoding", "ch06", (), ("PositionalEncoding",)),
    Exercise(
        "ex07", "ex07_transformer", "ch07", ("ex01", "ex03", "ex05"),
        ("PositionWiseFFN", "AddNorm", "TransformerEncoderBlock", "TransformerDecoderBlock"),
    ),
    Exercise(
        "ex08", "ex08_structured_masks", "ch08", ("ex01",),
        ("sliding_window_mask", "graph_mask", "softmax_with_mask", "MaskedDotProductAttention"),
    ),
    Exercise("ex09", "ex09_rotary", "ch10", ("ex01",), ("RotaryEmbedding", "RotaryDotProductAttention")),
    Exercise(
        "ex10", "ex10_tiled_attention", "ch11", (),
        ("key_blocks", "online_softmax_update", "block_mask", "tiled_attention"),
    ),
    Exercise("ex11", "ex11_grouped_kv_cache", "ch12", (), ("repeat_kv", "GroupedQueryAttention")),
)

BY_ID = {ex.id: ex for ex in EXERCISES}


def get(ex_id):
    """The exercise with this id; a clear error listing the valid ids otherwise."""
    try:
        return BY_ID[ex_id]
    except KeyError:
        raise ValueError(f"unknown exercise {ex_id!r}; use one of {', '.join(BY_ID)}") from None


# --- what a learner's exercise can be: the one status vocabulary ---------------------------------
# The grader saves one of GRADER_STATUSES per exercise ("blocked": not run, because the learner's own
# code of an exercise it builds on has not passed); the app adds "not_graded" for an exercise with no
# saved result. Pages, the review chapter, the grading client, the class server and the grader all use these.
GRADER_STATUSES = ("passed", "failed", "not_written", "error", "blocked")
STATUSES = GRADER_STATUSES + ("not_graded",)


def status_of(ex_id, results):
    """One of STATUSES for an exercise, from saved results {ex_id: record} (a record without a
    known status counts as "failed" unless it passed)."""
    record = results.get(ex_id)
    if not record:
        return "not_graded"
    if record.get("passed"):
        return "passed"
    return record["status"] if record.get("status") in ("not_written", "error", "blocked") else "failed"


# --- the one scoring rule ---------------------------------------------------------------------------
def score_for(status, checks_passed, checks_total):
    """An exercise's score: the fraction of its checks passed, but 0 when it is not started (status
    "not_written": a stub's checks that pass by accident, such as "refuses bad sizes", count for nothing)."""
    return 0.0 if status == "not_written" else round(checks_passed / max(checks_total, 1), 4)


def saved_score(record):
    """The score of a saved result record by score_for's rule (a record saved before the rule may hold a stub's
    pass fraction), or None when the record has no score."""
    if not record or record.get("score") is None:
        return None
    return 0.0 if record.get("status") == "not_written" else float(record["score"])
