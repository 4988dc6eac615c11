"""Gradebook and analytics from a frame of graded submissions (pure pandas).

The input frame has one row per submission with its newest result, as
classroom.analytics.frames.submissions_frame builds it: columns submission_id,
user_id, email, name, exercise_id, created_at, late, status (the result's:
passed | failed | not_written | error | blocked, or None while ungraded),
passed, score, mistake_ids (list).
"""

import pandas as pd

from course.common import ranking

from ..data.which_counts import ATTEMPTED, score_that_counts

FAILING = ("failed",)  # wrong results: the statuses mistakes are counted among
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a cell starting so as a formula


def graded(frame):
    """The rows that have a verdict."""
    return frame[frame["status"].notna()]


def attempted(frame):
    """The rows whose verdict judged the learner's code (not 'blocked' on an earlier exercise)."""
    return frame[frame["status"].isin(ATTEMPTED)]


def gradebook(frame, exercise_ids, learners=None, removed=(), adjustments=None):
    """Learners x exercises: the score that counts, attempts and late flag per exercise (one row per learner).

    Columns: email, name, removed, then per exercise `exNN` (the score that counts: the best submission's, best
    by course.common.ranking as everywhere else, or the score staff set in its place (an override,
    which_counts.score_that_counts); blank if never graded or only blocked, and not overridden),
    `exNN_attempts` (submissions), `exNN_late` (1 if that best submission was late), `exNN_variant` (the
    exercise variant it was graded on, grader/variants.py; blank if never graded), `exNN_source` ("graded",
    "override", or blank: no score), `exNN_extended_until` (the learner's extended deadline, 'YYYY-MM-DD HH:MM'
    UTC, or blank), then `total` (see `total`). `learners` (email, name) adds learners who never submitted.
    `removed` (emails taken off the roster) sets the `removed` column to 1. `adjustments`: the extensions and
    overrides in force (classroom/data/adjustments.py `current`), None: none.
    """
    best = ranking.best_first(attempted(frame), order="submission_id").drop_duplicates(["email", "exercise_id"])
    attempts = frame.groupby(["email", "exercise_id"]).size()
    people = frame[["email", "name"]].drop_duplicates("email")
    if learners is not None:
        people = pd.concat([people, pd.DataFrame(learners, columns=["email", "name"])]).drop_duplicates("email")
    book = people.set_index("email").sort_index()
    book["removed"] = book.index.isin(list(removed)).astype(int)
    scores = best.pivot(index="email", columns="exercise_id", values="score")
    lates = best.pivot(index="email", columns="exercise_id", values="late")
    chosen = best.pivot(index="email", columns="exercise_id", values="variant") if "variant" in best else {}
    counts = attempts.unstack("exercise_id")
    for ex_id in exercise_ids:
        book[ex_id] = scores[ex_id] if ex_id in scores else float("nan")
        book[f"{ex_id}_attempts"] = (counts[ex_id] if ex_id in counts else 0)
        book[f"{ex_id}_late"] = (lates[ex_id] if ex_id in lates else False)
        book[f"{ex_id}_variant"] = (chosen[ex_id] if ex_id in chosen else float("nan"))
        book[f"{ex_id}_source"] = ""
        book[f"{ex_id}_extended_until"] = ""
    for ex_id in exercise_ids:
        book[ex_id] = book[ex_id].astype(float)
        book[f"{ex_id}_attempts"] = book[f"{ex_id}_attempts"].fillna(0).astype(int)
        book[f"{ex_id}_late"] = book[f"{ex_id}_late"].astype("boolean").fillna(False).astype(int)
        book[f"{ex_id}_variant"] = pd.to_numeric(book[f"{ex_id}_variant"]).astype("Int64")
        book.loc[book[ex_id].notna(), f"{ex_id}_source"] = "graded"
    _adjust(book, exercise_ids, adjustments)
    book["total"] = total(book, exercise_ids)
    return book.reset_index()


def _adjust(book, exercise_ids, adjustments):
    """Apply the extensions and overrides in force to a gradebook indexed by email (in place)."""
    if adjustments is None:
        return
    for row in adjustments.itertuples(index=False):
        if row.email not in book.index or row.exercise_id not in exercise_ids:
            continue
        if not pd.isna(row.override):
            computed = book.at[row.email, row.exercise_id]
            book.at[row.email, row.exercise_id] = score_that_counts(None if pd.isna(computed) else computed,
                                                                    row.override)
            book.at[row.email, f"{row.exercise_id}_source"] = "override"
        if not pd.isna(row.extended_until):
            book.at[row.email, f"{row.exercise_id}_extended_until"] = f"{row.extended_until:%Y-%m-%d %H:%M}"


def total(book, exercise_ids):
    """Each learner's total: the mean of their best scores over all `exercise_ids`, an exercise never graded
    counting 0 (from 0 to 1, like the scores)."""
    return book[list(exercise_ids)].astype(float).fillna(0.0).sum(axis=1) / len(exercise_ids)


def gradebook_view(book, exercise_ids):
    """The gradebook as the page shows it by default: email, name, each exercise's best score and the total in
    percent (blank where never graded), removed (True or False). Attempts, late flags and variant numbers are in
    the export (`gradebook_csv`) only."""
    view = book[["email", "name"]].copy()
    for column in [*exercise_ids, "total"]:
        view[column] = 100 * book[column].astype(float)
    view["removed"] = book["removed"].astype(bool)
    return view


def marked_cells(book, exercise_ids):
    """The gradebook cells to mark: {(exercise id, overridden, extended): [the book's row labels]} of the learners
    whose score of that exercise staff set (`exNN_source` "override") and/or who have an extension of it."""
    marked = {}
    for ex_id in exercise_ids:
        overridden = book[f"{ex_id}_source"] == "override"
        extended = book[f"{ex_id}_extended_until"] != ""
        for label in book.index[overridden | extended]:
            marked.setdefault((ex_id, bool(overridden[label]), bool(extended[label])), []).append(label)
    return marked


def exercise_summary(frame, exercise_ids):
    """Per exercise: learners who tried, learners who passed, pass rate, median attempts to pass."""
    rows = []
    done = attempted(frame).sort_values(["created_at", "submission_id"])
    for ex_id in exercise_ids:
        ex = done[done["exercise_id"] == ex_id]
        tried = ex["email"].nunique()
        attempt_number = ex.groupby("email").cumcount() + 1
        first_pass = attempt_number[ex["passed"].astype(bool)].groupby(ex["email"]).min()
        rows.append({
            "exercise_id": ex_id,
            "learners": tried,
            "passed": int(first_pass.size),
            "pass_rate": first_pass.size / tried if tried else float("nan"),
            "submissions": len(ex),
            "submission_pass_rate": float(ex["passed"].astype(bool).mean()) if len(ex) else float("nan"),
            "median_attempts_to_pass": float(first_pass.median()) if first_pass.size else float("nan"),
        })
    return pd.DataFrame(rows)


def spreadsheet_safe(value):
    """A text cell a spreadsheet shows as text: one starting like a formula (after any spaces) gets a leading
    apostrophe."""
    return "'" + value if isinstance(value, str) and value.lstrip(" ").startswith(FORMULA_STARTS) else value


def spreadsheet_csv(frame, bom=True):
    """CSV text of a frame for spreadsheets, the one writer of every CSV the app and the CLI hand out: text cells
    through spreadsheet_safe (no formulas), empty cells for missing numbers, a UTF-8 BOM (Excel reads the names
    right) unless `bom` is false."""
    safe = frame.copy()
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]):
            safe[column] = safe[column].map(spreadsheet_safe)
    return ("\ufeff" if bom else "") + safe.to_csv(index=False, float_format="%.4g", na_rep="")


def gradebook_csv(book):
    """The gradebook as CSV text for spreadsheets (spreadsheet_csv)."""
    return spreadsheet_csv(book)


def failing_learners(frame, ex_id):
    """How many learners have a failing submission (status in FAILING, by its newest verdict) of one exercise."""
    rows = graded(frame)
    return int(rows.loc[(rows["exercise_id"] == ex_id) & rows["status"].isin(FAILING), "user_id"].nunique())


def mistake_bars(frame, ex_id, labels=None):
    """The known mistakes among failing submissions of one exercise, by the learners who made them: most learners
    first, a learner counted once per mistake however often they submit it (counted by submissions, ten
    resubmissions of one mistake by one learner made it 77% of the class's mistakes against 23% for the one three
    learners made). Ties go by mistake id, not by submissions (which one learner can add).

    Columns: mistake_id, label, learners (those with a failing submission that made it), learner_share (of the
    learners with a failing submission of the exercise: failing_learners), count (the failing submissions that
    made it), share (of the failing submissions), submission_ids (the submissions behind the bar). `labels` maps
    mistake ids to a readable text (the grader's hints).
    """
    failing = graded(frame)
    failing = failing[(failing["exercise_id"] == ex_id) & failing["status"].isin(FAILING)]
    columns = ["mistake_id", "label", "learners", "learner_share", "count", "share", "submission_ids"]
    if failing.empty:
        return pd.DataFrame(columns=columns)
    exploded = (failing[["submission_id", "user_id", "mistake_ids"]].explode("mistake_ids")
                .dropna(subset=["mistake_ids"]).drop_duplicates(["submission_id", "mistake_ids"]))
    if exploded.empty:
        return pd.DataFrame(columns=columns)
    by_mistake = exploded.groupby("mistake_ids")
    out = pd.DataFrame({"submission_ids": by_mistake["submission_id"].agg(lambda ids: sorted(ids.tolist())),
                        "learners": by_mistake["user_id"].nunique()}).rename_axis("mistake_id").reset_index()
    out["learner_share"] = out["learners"] / failing["user_id"].nunique()
    out["count"] = out["submission_ids"].map(len)
    out["share"] = out["count"] / len(failing)
    out["label"] = out["mistake_id"].map(lambda m: (labels or {}).get(m, m))
    return out.sort_values(["learners", "mistake_id"], ascending=[False, True])[columns].reset_index(drop=True)
