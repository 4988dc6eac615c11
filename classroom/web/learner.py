"""The Learner of class mode: the signed-in learner's results and notes in the class database, the class pages.

app.py builds one per run (`signed_in()`); pages reach it through
course.app.learner.current(), never by importing classroom/. It returns what
the self-study Learner returns: results shaped like course.app.progress's, note
times as timezone-aware datetimes.
"""

from dataclasses import replace
from datetime import UTC

import streamlit as st

from course.common import pages_index
from course.app.learner import LabRefused, Learner
from course.common.i18n import t

from . import access, learner_records, web
from ..data import lab_runs, roles

PRACTICE = replace(pages_index.get("practice"), path="classroom/app_pages/practice.py")  # submit to the class queue
# Added for the roles that may open them (each page checks again): the key after "class_" is the access action.
CLASS_PAGES = (
    pages_index.PageEntry("class_gradebook", "classroom/app_pages/gradebook.py", "nav.gradebook", "class",
                          roles.GRADEBOOK_PATH, ":material/table_chart:"),
    pages_index.PageEntry("class_analytics", "classroom/app_pages/analytics.py", "nav.analytics", "class",
                          "analytics", ":material/insights:"),
)


class ClassLearner(Learner):
    """Whoever this browser's session belongs to (nobody: a visitor, who sees the course but no progress)."""

    def __init__(self, store, sign_in):
        self.store, self.sign_in, self.user = store, sign_in, sign_in.user

    @property
    def anonymous(self):
        return self.user is None

    def results(self):
        return {} if self.user is None else learner_records.best_results(self.store, self.user.id)

    def record(self, report, target=None):
        raise RuntimeError("a class records verdicts through its queue: the Practice page submits the file and a "
                           "worker stores the grader's verdict (classroom/line/worker.py); no page records a report")

    def load_notes(self):
        return learner_records.load_notes(self.store, self.user.id)

    def save_note(self, key, text):
        learner_records.save_note(self.store, self.user.id, key, text)

    def saved_at(self, key):
        stamp = learner_records.note_times(self.store, self.user.id).get(key)
        return stamp.replace(tzinfo=UTC) if stamp else None  # the store keeps naive UTC

    def notes_intro(self, lang):
        return t("classroom.notes_intro", lang)

    @property
    def notes_prefix(self):
        return f"notes_u{self.user.id}_"  # one learner's widgets, never another's

    def navigation(self):
        entries = [PRACTICE if e.key == "practice" else e for e in pages_index.existing()
                   if e.key not in pages_index.SELF_STUDY_ONLY]
        sections = pages_index.by_section(entries)
        allowed = [] if self.user is None else [
            e for e in CLASS_PAGES if access.allowed(self.user.role, e.key.removeprefix("class_"))]
        if allowed:
            sections["class"] = allowed
        return sections

    def page(self, key):
        return PRACTICE if key == "practice" else super().page(key)

    def page_opened(self):
        web.tidy_address()

    def require_sign_in(self):
        if self.user is None:
            web.sign_in_page(self.sign_in)
            st.stop()
        web.sidebar_identity(self.user)

    def own_modules(self):
        return self.results()  # graded by the class: their best submission per exercise

    def stage_own_modules(self, folder):
        for module, code in learner_records.passed_modules(self.store, self.user.id).items():
            (folder / f"{module}.py").write_text(code, encoding="utf-8")
        return folder

    confines_own_modules = True  # a learner's code on the class's server: in bubblewrap, away from its data

    def own_modules_texts(self, lang):
        return t("classroom.lab_mine_body", lang), t("classroom.lab_mine_not_passed", lang)

    def start_lab_run(self, hold_s, lang):
        """A place among the class's lab runs (classroom/data/lab_runs.py), or LabRefused saying why not."""
        if self.user is None:
            raise LabRefused(t("classroom.lab_sign_in", lang))
        try:
            return lab_runs.start(self.store, self.user.id, hold_s)
        except lab_runs.Refused as refused:
            raise LabRefused(t(f"classroom.{refused.key}", lang, **refused.params)) from None

    def end_lab_run(self, token):
        if token is not None:
            lab_runs.finish(self.store, token)


def signed_in():
    """The Learner of this run: whoever the browser's session belongs to."""
    return ClassLearner(web.store(), web.current())
