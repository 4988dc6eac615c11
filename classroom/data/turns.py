"""A job's turn: its place in its learner's round robin within its batch of the claim order (classroom/line/queue.py
claim_order), fixed when the job is queued.

The claim order takes every learner's turn-1 jobs (oldest first), then their turn-2 jobs, and so on. A job's turn
comes after every unfinished job of its learner in the batch, and after as many turns as its learner was served in
the batch within FAIR_WINDOW_S (their jobs of the batch claimed since, finished or not). Counting the jobs served
keeps the round robin when workers finish jobs: a learner's sixth job keeps turn 6 after their first five were
graded, so a learner who queued one job after them is claimed before it. Were the turns counted over the unfinished
jobs alone, each finished job would give its learner's next job turn 1 again, ahead of the others' jobs queued
later (a single job queued behind another learner's six was claimed 7th of 7, where the round robin says 2nd).

A turn depends on its own learner's jobs alone: a learner who queues more only moves their own jobs back.
"""

from datetime import timedelta

from sqlalchemy import and_, case, func, or_, select

from .models import REGRADE, SET_ASIDE, SUBMIT, Job, Submission

FAIR_WINDOW_S = 600.0  # a learner's jobs claimed this recently still count in their next job's turn
UNFINISHED = ("queued", "running")


def in_batch(batch):
    """The SQL condition of a job being in one batch of the claim order (SUBMIT, SET_ASIDE or REGRADE)."""
    if batch == REGRADE:
        return Job.reason == "regrade"
    return and_(Job.reason != "regrade", Job.full_time == (batch == SET_ASIDE))


def next_turns(session, batch, now, user_ids=None):
    """{learner id: the turn their next job of this batch takes} for the learners given (None: every learner with a
    job counted), inside the caller's transaction; a learner missing from it takes turn 1.

    Counted: the learner's unfinished jobs of the batch, and those claimed since now - FAIR_WINDOW_S; for new
    submissions, their first runs set aside since then too (each held a worker in this batch before it was queued
    again after the others). The turn is one past that count, and one past the learner's last unfinished turn (their
    own jobs keep their order)."""
    since = now - timedelta(seconds=FAIR_WINDOW_S)
    own = in_batch(batch)
    unfinished = and_(own, Job.state.in_(UNFINISHED))
    counted = and_(own, or_(Job.state.in_(UNFINISHED), Job.started_at >= since))
    if batch == SUBMIT:
        counted = or_(counted, and_(in_batch(SET_ASIDE), Job.set_aside_at >= since))
    query = (select(Submission.user_id, func.count(Job.id), func.max(case((unfinished, Job.turn))))
             .join(Submission, Submission.id == Job.submission_id).where(counted).group_by(Submission.user_id))
    if user_ids is not None:
        query = query.where(Submission.user_id.in_(list(user_ids)))
    return {user_id: 1 + max(count, last or 0) for user_id, count, last in session.execute(query)}


def next_turn(session, user_id, batch, now):
    """The turn of a learner's next job of this batch (next_turns), inside the caller's transaction."""
    return next_turns(session, batch, now, [user_id]).get(user_id, 1)
