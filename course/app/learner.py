"""Who is learning: the one object pages ask for results, notes and the pages the mode shows.

app.py decides the mode once per run and hands its Learner to `use()`; pages
read it with `current()`, which is self-study when app.py has not set one (a
page opened on its own, as AppTest does). Self-study keeps everything in local
files (course.app.progress, course.app.notes) and records the grader's reports
itself (`record`: the grader only reports); class mode's Learner lives in
classroom/ and returns the same types, so no page imports classroom/.
"""

from abc import ABC, abstractmethod

import streamlit as st

from course.app import grading_client, notes, progress
from course.common import pages_index
from course.common.i18n import t
from course.common.paths import PROJECT_ROOT

SLOT = "app_learner"  # session-state key of this run's Learner (not a widget)


class LabRefused(Exception):
    """A live training-lab run this mode's rules refuse now; the message, in the learner's language, says why."""


class Learner(ABC):
    """One mode's answers to what differs between self-study and a class."""

    anonymous = False  # a class visitor not signed in: no progress to show

    @abstractmethod
    def results(self):
        """{ex_id: record} of the learner's best result per exercise (course.common.ranking; {} when none)."""

    @abstractmethod
    def record(self, report, target=None):
        """Record a grader report (its JSON form) of the learner's exercise files (default: exercises/)."""

    @abstractmethod
    def load_notes(self):
        """{page key: text} of the learner's notes."""

    @abstractmethod
    def save_note(self, key, text):
        """Save one page's note (empty text removes it)."""

    @abstractmethod
    def saved_at(self, key):
        """When the note for `key` was last saved: a timezone-aware datetime, or None."""

    @abstractmethod
    def notes_intro(self, lang):
        """The Notes page's introduction in `lang`."""

    @property
    def notes_prefix(self):
        """Prefix of the Notes page's widget keys (a class keeps each learner's widgets apart)."""
        return "notes_"

    def navigation(self):
        """{section: [PageEntry]} of the pages this mode shows, in order."""
        return pages_index.by_section(pages_index.existing())

    def page(self, key):
        """The entry this mode shows for a page key (links go to it)."""
        return pages_index.get(key)

    def page_opened(self):
        """After st.navigation, on every page (a class takes a used sign-in link out of the address bar)."""

    def require_sign_in(self):
        """Before a page with the learner's own data: a class shows its sign-in page and stops
        unless someone is signed in, then names them in the sidebar. Nothing in self-study."""

    def own_modules(self):
        """{ex_id: record} deciding which of the learner's modules the lab's "with your own modules" run uses
        (those whose exercise "passed"); {} when it has none."""
        return {}

    def stage_own_modules(self, folder):
        """The folder holding those modules' files for the run, `<module>.py` (None: exercises/); a class writes
        its learner's passed code into `folder` (an empty folder, removed once the run has copied it)."""
        return None

    confines_own_modules = False  # run the learner's modules confined (course/app/lab_runner.confined)

    def own_modules_texts(self, lang):
        """(what the lab's own-modules run is, what to pass first) in `lang`."""
        return t("lab.mine_body", lang), t("lab.mine_not_passed", lang)

    def start_lab_run(self, hold_s, lang):
        """Before a training-lab run starts on this server (ending within `hold_s` seconds) -> a token for
        `end_lab_run`; LabRefused when this mode's rules refuse it now. Self-study: always (their own machine)."""
        return None

    def end_lab_run(self, token):
        """The run started under `token` has ended (collected, failed or stopped)."""


class SelfStudyLearner(Learner):
    """The learner on their own machine: results and notes in $ATTENTION_LAB_HOME."""

    def results(self):
        return progress.load_results()

    def record(self, report, target=None):
        progress.record_report(PROJECT_ROOT / "exercises" if target is None else target, report)

    def load_notes(self):
        return notes.load_notes()

    def save_note(self, key, text):
        notes.save_note(key, text)

    def saved_at(self, key):
        return notes.saved_at(key)

    def notes_intro(self, lang):
        return t("notes.intro", lang, path=str(notes.notes_path()))

    def page_opened(self):
        """The grading server starts with the app, so the learner's first Grade click does not wait for it."""
        grading_client.start_grading_server_early()

    def own_modules(self):
        return progress.load_newest()  # the files in exercises/ as they stand now


def use(learner):
    """Make `learner` this session's Learner (app.py, once per run)."""
    st.session_state[SLOT] = learner


def current():
    """This run's Learner; self-study when app.py has not set one."""
    learner = st.session_state.get(SLOT)
    return learner if isinstance(learner, Learner) else SelfStudyLearner()
