"""The training lab's live runs in a class: a class-wide cap on the runs the app server trains at once.

The lab page (app_pages/lab.py) trains in child processes of the app server. In a class the instructor
decides how many may train at once (`python -m classroom limits --lab-runs N`, the class setting `lab_runs`):
0, the default, lets no learner start one. TAs and instructors may always start one; every run counts toward
the cap. Each person trains one run at a time (a second tab cannot take a second place). A run holds its
place until the page collects it (`finish`), or at the latest until its `ends_by` (a tab closed while it
trained). The page reaches this through its Learner (classroom/web/learner.py), never by importing classroom/.
"""

from datetime import timedelta

from sqlalchemy import func, select, update

from .models import LabRun, Setting, User, utcnow

SETTING = "lab_runs"  # the class setting holding the cap (classroom/data/settings.py DEFAULT_SETTINGS)
STAFF = ("ta", "instructor")


class Refused(Exception):
    """A run the class's rules refuse now: `key` names the learner's message (classroom.<key>), `params` fill it."""

    def __init__(self, key, **params):
        self.key, self.params = key, params
        super().__init__(f"{key} {params}")


def _live(now):
    """The condition of a run that still holds its place at `now`."""
    return LabRun.finished_at.is_(None), LabRun.ends_by > now


def start(store, user_id, hold_s, now=None):
    """Take a place for a run of this person that ends within `hold_s` seconds -> its id (for `finish`).

    Refused when they are off the roster, already train a run, or (learners) when the class allows no runs or
    all its places are taken. One transaction: the person's row and then the cap's row are locked, so that
    two tabs, or two learners, cannot both take the last place.
    """
    now = now or utcnow()
    with store.session() as session:
        user = session.scalar(select(User).where(User.id == user_id).with_for_update())
        if user is None or user.removed_at is not None:
            raise Refused("lab_sign_in")
        setting = session.scalar(select(Setting).where(Setting.key == SETTING).with_for_update())
        cap = int(setting.value) if setting is not None else 0
        if session.scalar(select(func.count(LabRun.id)).where(LabRun.user_id == user.id, *_live(now))):
            raise Refused("lab_own_running")
        if user.role not in STAFF:
            if cap == 0:
                raise Refused("lab_off")
            if session.scalar(select(func.count(LabRun.id)).where(*_live(now))) >= cap:
                raise Refused("lab_full", cap=cap)
        run = LabRun(user_id=user.id, started_at=now, ends_by=now + timedelta(seconds=hold_s))
        session.add(run)
        session.flush()
        return run.id


def finish(store, run_id, now=None):
    """The run has ended (collected, failed or stopped): its place is free."""
    with store.session() as session:
        session.execute(update(LabRun).where(LabRun.id == run_id, LabRun.finished_at.is_(None))
                        .values(finished_at=now or utcnow()))


def running(store, now=None):
    """How many runs hold a place now."""
    with store.session() as session:
        return session.scalar(select(func.count(LabRun.id)).where(*_live(now or utcnow())))
