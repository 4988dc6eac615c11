"""A signed-in class learner's own records in the class database: notes and best results.

Class mode keeps no state outside the database: the Notes page, the sidebar
progress and the chapter footers read these (through classroom.web.learner) instead of the
local notes and progress files. `best_results` has the shape of
course.app.progress.load_results ({ex_id: record}), so both Learners return the same.
"""

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite

from ..data.models import Note, utcnow
from ..data.which_counts import best_per_exercise, newest_results, overrides, score_that_counts

MAX_NOTE_CHARS = 100_000  # one page's note


def best_results(store, user_id):
    """{ex_id: {"passed", "score", "status", "summary"}}: the learner's best graded submission per exercise.

    Each submission counts with its newest verdict; which is best: see classroom/data/which_counts.py. Its score is
    the score that counts (which_counts.score_that_counts: one staff set in its place wins); whether it passed is
    the grader's (an override sets a score, not passed code).
    """
    with store.session() as session:
        best = best_per_exercise(newest_results(session, user_id=user_id))
        overridden = overrides(session, [user_id])
        return {ex_id: {"passed": bool(r.passed), "score": score_that_counts(r.score, overridden.get((user_id, ex_id))),
                        "status": r.status, "summary": r.summary}
                for ex_id, (_, r) in best.items()}


def passed_modules(store, user_id):
    """{module: code} of each exercise whose best graded submission (the one `best_results` reports) passed:
    the .py text, or a notebook's answer cell."""
    from course.common.exercise_index import get

    from ..line.grading import code_of  # loads the grader: only when a run needs the code

    with store.session() as session:
        best = best_per_exercise(newest_results(session, user_id=user_id))
        passed = {ex_id: s for ex_id, (s, r) in best.items() if r.passed}
    found = {get(ex_id).module: code_of(ex_id, s.source, s.kind, s.filename)[0] for ex_id, s in passed.items()}
    return {module: code for module, code in found.items() if code is not None}


def load_notes(store, user_id):
    """{page key: text} of one learner's notes."""
    with store.session() as session:
        return dict(session.execute(select(Note.page_key, Note.text).where(Note.user_id == user_id)).all())


def note_times(store, user_id):
    """{page key: last save (naive UTC datetime)} of one learner's notes."""
    with store.session() as session:
        return dict(session.execute(select(Note.page_key, Note.updated_at).where(Note.user_id == user_id)).all())


def save_note(store, user_id, page_key, text):
    """Save one note in one statement (insert or replace: the last write wins); empty text deletes it."""
    if not isinstance(page_key, str) or not page_key or len(page_key) > 64:
        raise ValueError("a note needs a page key such as 'ch01'")
    if not isinstance(text, str):
        raise TypeError(f"a note is text, got {type(text).__name__}")
    if len(text) > MAX_NOTE_CHARS:
        raise ValueError(f"a note holds at most {MAX_NOTE_CHARS} characters; this one has {len(text)}")
    with store.session() as session:
        if not text.strip():
            session.execute(delete(Note).where(Note.user_id == user_id, Note.page_key == page_key))
            return
        dialect = postgresql if store.is_postgres else sqlite
        now = utcnow()
        statement = dialect.insert(Note).values(user_id=user_id, page_key=page_key, text=text, updated_at=now)
        session.execute(statement.on_conflict_do_update(
            index_elements=["user_id", "page_key"], set_={"text": text, "updated_at": now}))
