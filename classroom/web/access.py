"""Who may do what, checked on the server for every action.

Every function takes the acting user's id (from a live session, never a role
from the browser), reads the actor's role from the database, and raises
AccessDenied before touching anything it may not. Roles:
- learner: submit; read their own submissions, code and feedback only;
- ta: read every learner's submissions and feedback, gradebook, analytics,
  regrade;
- instructor: the same. The roster, sign-in links, deadlines and limits are
  the command line's (`python -m classroom`), run by whoever runs the class's
  machines, not actions of the app.
"""

from sqlalchemy import select

from ..data import adjustments, exercise_table
from ..data.roster import removed_emails, user_by_id
from ..data.submissions import submit as store_submit
from ..data.variants import learner_variant
from ..analytics import analytics, copy_flags, frames
from ..line import queue
from ..data.models import ROLES, Result, Submission, User
from ..data.roles import PERMISSIONS, allowed  # noqa: F401 (access.allowed, access.PERMISSIONS: the callers' names)



class AccessDenied(PermissionError):
    """The actor may not do this; the message is safe to show."""


def actor(store, actor_id):
    """The acting user, fresh from the database; AccessDenied when unknown."""
    user = user_by_id(store, actor_id) if actor_id is not None else None
    if user is None or user.role not in ROLES or user.removed_at is not None:
        raise AccessDenied("sign in first: this page is for the class's roster only")
    return user


def require(store, actor_id, action):
    """The actor, if their role allows the action; AccessDenied otherwise."""
    user = actor(store, actor_id)
    if not allowed(user.role, action):
        raise AccessDenied(f"a {user.role} may not {action.replace('_', ' ')}")
    return user


def submit(store, actor_id, ex_id, data, filename, lang="en"):
    """Submit the actor's own code, graded with feedback in `lang` -> submission id (after the commit)."""
    user = require(store, actor_id, "submit")
    return store_submit(store, user.id, ex_id, data, filename, lang=lang)


def own_variant(store, actor_id, ex_id):
    """The actor's own exercise variant (assigned at this first look if need be), for the exercise text."""
    user = require(store, actor_id, "submit")
    return learner_variant(store, user.id, ex_id)


def _may_read(user, owner_id):
    return user.id == owner_id or allowed(user.role, "read_any")


def submission_detail(store, actor_id, submission_id):
    """A submission with its code, newest feedback and every verdict -> dict.

    A learner asking for someone else's submission gets the same answer as for
    one that does not exist.
    """
    user = require(store, actor_id, "read_own")
    with store.session() as session:
        submission = session.get(Submission, submission_id)
        if submission is None or not _may_read(user, submission.user_id):
            raise AccessDenied(f"there is no submission {submission_id} of yours")
        results = list(session.scalars(select(Result).where(Result.submission_id == submission_id)
                                       .order_by(Result.id)))
        owner = session.get(User, submission.user_id)
        return {
            "id": submission.id, "email": owner.email, "name": owner.name, "exercise_id": submission.exercise_id,
            "kind": submission.kind, "filename": submission.filename, "source": submission.source,
            "created_at": submission.created_at, "status": submission.status, "late": submission.late,
            "penalty": submission.penalty,
            "results": [{"status": r.status, "passed": r.passed, "score": r.score, "summary": r.summary,
                         "checks": r.checks, "report": r.report, "run_s": r.run_s, "grading_s": r.grading_s,
                         "created_at": r.created_at, "grader_version": r.grader_version, "sandbox": r.sandbox}
                        for r in results],
        }


def history(store, actor_id, user_id=None, ex_id=None):
    """The submissions (newest verdict each) of a user: a learner only ever gets their own."""
    user = require(store, actor_id, "read_own")
    user_id = user.id if user_id is None else user_id
    if not _may_read(user, user_id):
        raise AccessDenied("you can only see your own submissions")
    frame = frames.submissions_frame(store, user_id=user_id)
    if ex_id is not None:
        frame = frame[frame["exercise_id"] == ex_id]
    return frame.sort_values("submission_id", ascending=False).reset_index(drop=True)


def gradebook(store, actor_id):
    """The gradebook frame (learners x exercises), extensions and overrides applied."""
    require(store, actor_id, "gradebook")
    return analytics.gradebook(frames.class_frame(store), exercise_table.EXERCISE_IDS, frames.learners(store),
                               removed_emails(store), adjustments.current(store))


def class_adjustments(store, actor_id):
    """The extensions and overrides in force, with their reasons (classroom/data/adjustments.py `current`): staff
    only."""
    require(store, actor_id, "gradebook")
    return adjustments.current(store)


def own_arrangements(store, actor_id, ex_id):
    """The actor's own deadline of an exercise and any score staff set for it: (the exercise's deadline, theirs,
    the override or None); never the reasons, which are staff's."""
    user = require(store, actor_id, "read_own")
    exercise_table.get(ex_id)
    class_deadline, own = adjustments.own_deadline(store, user.id, ex_id)
    return class_deadline, own, adjustments.own_override(store, user.id, ex_id)


def class_frame(store, actor_id):
    """Every submission with its newest verdict, for the analytics page."""
    require(store, actor_id, "analytics")
    return frames.class_frame(store)


def similarity_flags(store, actor_id):
    """The class's similarity flags and each exercise's threshold (classroom/analytics/copy_flags.py): TAs and instructors."""
    require(store, actor_id, "analytics")
    return copy_flags.class_flags(store)


def regrade(store, actor_id, submission_ids=None):
    """Queue regrade jobs (default: every submission) -> how many."""
    require(store, actor_id, "regrade")
    return queue.enqueue_regrade(store, submission_ids)
