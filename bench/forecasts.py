"""The wait forecast against the actual waits of a burst (bench/classroom.py, part 1b, and
tests/test_classroom_eta_honesty.py): what each page showed at submission and as the queue moved, and where
the error came from (--explain).

A page shows the forecast of its snapshot (classroom/line/live.py) every POLL_S; here each learner's thread does the
same until its verdict is stored. The forecast "at submission" is the first one shown; the one "halfway" is the
first shown at or after half the actual wait, compared with the wait then left.
"""

import statistics
import threading
import time
from datetime import timedelta

from sqlalchemy import select

from classroom.line import eta, grading_times, live
from classroom.data.submissions import submit
from classroom.data.models import Job, utcnow

WITHIN, WITHIN_GOAL = 0.25, 0.8  # goal: this share of the forecasts within this relative error of the actual wait


def burst_with_forecasts(store, users, mix, tag, shown=None, timeout_s=900):
    """Every learner in `users` submits mix[i] at once and reads the wait forecast its page would show ->
    {submission id: (label, submitted at, forecast feedback at or None)} (utcnow times; None: no live worker,
    or graded before the page's first look). With a dict `shown`, each also follows its submission as the page
    does until it is graded: shown[sid] = [(utcnow at the look, forecast feedback at or None)]."""
    acked, lock, gate = {}, threading.Lock(), threading.Barrier(len(users))

    def learner(i):
        label, ex_id, source = mix[i]
        gate.wait()
        sid = submit(store, users[i], ex_id, source + f"\n# {tag}\n", f"{ex_id}.py")
        acknowledged, shown_at = time.monotonic(), utcnow()
        # what the page shows at its first poll: the app's shared snapshot, read after the acknowledgement
        finish_s = live.state_of(store, users[i], sid, acknowledged).finish_s
        with lock:
            acked[sid] = (label, shown_at, None if finish_s is None else shown_at + timedelta(seconds=finish_s))
        if shown is not None:
            shown[sid] = follow(store, users[i], sid, acknowledged, timeout_s)

    threads = [threading.Thread(target=learner, args=(i,)) for i in range(len(users))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return acked


def follow(store, user_id, sid, acknowledged, timeout_s):
    """[(utcnow, forecast feedback at or None)] of a page following submission sid every live.POLL_S until graded."""
    looks, deadline = [], time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = live.state_of(store, user_id, sid, acknowledged)
        if state.state == "finished":
            return looks
        at = utcnow()
        looks.append((at, None if state.finish_s is None else at + timedelta(seconds=state.finish_s)))
        time.sleep(live.POLL_S)
    return looks


def percentile(values, q):
    """The q-quantile of values (nearest rank)."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def forecast_errors(acked, graded, signed=False):
    """[|forecast feedback time - actual| / actual wait] of the submissions that had a forecast (signed: without
    the absolute value, > 0 when the forecast was too long)."""
    errors = []
    for sid, (_, submitted, forecast) in acked.items():
        if forecast is not None:
            error = (forecast - graded[sid]).total_seconds() / max((graded[sid] - submitted).total_seconds(), 1e-3)
            errors.append(error if signed else abs(error))
    return errors


def halfway(acked, graded, shown):
    """{sid: (shown at, forecast feedback at)}: the first forecast a page showed at or after half its actual wait."""
    found = {}
    for sid, (_, submitted, _) in acked.items():
        middle = submitted + (graded[sid] - submitted) / 2
        later = [(at, forecast) for at, forecast in shown.get(sid, []) if at >= middle and forecast is not None]
        if later:
            found[sid] = later[0]
    return found


def halfway_errors(acked, graded, shown, of_left=True):
    """[|forecast feedback time - actual| / the wait left when it was shown (of_left) or the whole wait] of the
    halfway forecasts."""
    return [abs((forecast - graded[sid]).total_seconds())
            / max((graded[sid] - (at if of_left else acked[sid][1])).total_seconds(), 1e-3)
            for sid, (at, forecast) in halfway(acked, graded, shown).items()]


def within(errors, bound=WITHIN):
    """The share of relative errors of at most `bound`."""
    return sum(error <= bound for error in errors) / len(errors)


def error_summary(errors):
    """'median 12%, p90 30%, 85% within 25%' of some relative errors."""
    return (f"median {statistics.median(errors):.0%}, p90 {percentile(errors, 0.9):.0%}, "
            f"{within(errors):.0%} within {WITHIN:.0%}")


def jobs_of(store, since):
    """[(submission id, reason, claimed at, verdict at)] of the jobs claimed since `since`, in claim order."""
    with store.session() as session:
        return session.execute(select(Job.submission_id, Job.reason, Job.started_at, Job.finished_at)
                               .where(Job.started_at >= since, Job.finished_at.is_not(None))
                               .order_by(Job.started_at)).all()


def set_aside_summary(store, acked):
    """'N runs set aside, M of them not endless' of a burst's submissions: a run set aside whose run with the whole
    limit then ended before it was slow, not endless (set aside for nothing: its learner waited for the others)."""
    with store.session() as session:
        runs = grading_times.set_aside_runs(session, acked)
    slow = sorted(acked[sid][0] for sid, run_s in runs if run_s is not None and not grading_times.ran_to(run_s))
    return f"{len(runs)} runs set aside, {len(slow)} of them not endless" + (f" ({', '.join(slow)})" if slow else "")


def explain(store, acked, graded, name, shown=None):
    """Prints, per submission in claim order, its forecast and actual wait, the jobs claimed before it in the
    burst and how many of them hung (ran to eta.LIMIT_S), then which jobs hung and the slowest that did not."""
    since = min(submitted for _, submitted, _ in acked.values())
    jobs = [job for job in jobs_of(store, since) if job.submission_id in acked or job.reason == "regrade"]
    took = {job.submission_id: (job.finished_at - job.started_at).total_seconds()
            for job in jobs if job.submission_id in acked}
    print(f"  {name}, per submission in claim order (wait, forecast: seconds after submission; ahead: jobs "
          f"claimed before it since the burst began, of which hung: ran to the {eta.LIMIT_S:g} s limit; half: "
          f"at, forecast left and left of the forecast shown halfway)")
    later = halfway(acked, graded, shown or {})
    ahead = hung = 0
    for job in jobs:
        if job.submission_id in acked:
            label, submitted, forecast = acked[job.submission_id]
            wait = (graded[job.submission_id] - submitted).total_seconds()
            guess = "-" if forecast is None else f"{(forecast - submitted).total_seconds():5.1f}"
            error = "" if forecast is None else f"{(forecast - graded[job.submission_id]).total_seconds() / wait:+5.0%}"
            half = ""
            if job.submission_id in later:
                at, forecast_then = later[job.submission_id]
                half = (f"half {(at - submitted).total_seconds():4.1f}: {(forecast_then - at).total_seconds():4.1f}"
                        f" vs {(graded[job.submission_id] - at).total_seconds():4.1f}")
            print(f"    wait {wait:5.1f} forecast {guess} {error:>6}  ahead {ahead:3d} hung {hung}  "
                  f"took {took[job.submission_id]:5.1f}  {half:24} {label}")
        ahead += 1
        hung += (job.finished_at - job.started_at).total_seconds() >= eta.LIMIT_S
    hangs = sorted({acked[sid][0] for sid, seconds in took.items() if seconds >= eta.LIMIT_S})
    others = [(seconds, acked[sid][0]) for sid, seconds in took.items() if seconds < eta.LIMIT_S]
    print(f"  {name}: {sum(s >= eta.LIMIT_S for s in took.values())} jobs ran to the limit: "
          f"{', '.join(hangs) or 'none'}; the slowest other job took {max(others)[0]:.1f} s ({max(others)[1]})")
    for with_hang in (False, True):
        errors = [abs((acked[sid][2] - graded[sid]).total_seconds()) / (graded[sid] - acked[sid][1]).total_seconds()
                  for sid in acked if acked[sid][2] is not None and hung_before(jobs, sid) == with_hang]
        if errors:
            print(f"    forecasts with {'a hang' if with_hang else 'no hang'} claimed ahead: {len(errors)}, "
                  f"{error_summary(errors)}")


def hung_before(jobs, sid):
    """Did a job claimed before submission sid's (in `jobs`, claim order) run to the time limit?"""
    for job in jobs:
        if job.submission_id == sid:
            return False
        if (job.finished_at - job.started_at).total_seconds() >= eta.LIMIT_S:
            return True
    return False

