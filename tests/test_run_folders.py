"""Run folders (grader/run_folders.py) shared by several graders: a live one is never swept, a dead one is."""

import fcntl
import multiprocessing
import os
import shutil
import time

import pytest

from grader import run_folders
from grader.run_folders import locked_folder, sweep_stale_runs

ROUNDS = 300  # folders each maker makes while two sweepers sweep: the old order (make, then lock) lost 17-39 of 600


def _make(prefix, rounds, lost):
    """Make, check and remove `rounds` locked folders; count those that lost their folder or its lock meanwhile."""
    for _ in range(rounds):
        path, fd = locked_folder(prefix)
        os.sched_yield()  # let a sweep in, right after the folder appeared
        if not (path / ".lock").exists():
            with lost.get_lock():
                lost.value += 1
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def _sweep(stop):
    """Sweep until told to stop (an exception ends the process with a non-zero code)."""
    while not stop.is_set():
        sweep_stale_runs()


@pytest.mark.slow  # 600 folders made under two sweepers: 3-13 s
def test_folders_being_made_and_removed_survive_other_graders_sweeps():
    context = multiprocessing.get_context("fork")
    lost, stop = context.Value("i", 0), context.Event()
    prefix = run_folders.RUN_PREFIX + f"test-{os.getpid()}-"
    sweepers = [context.Process(target=_sweep, args=(stop,)) for _ in range(2)]
    makers = [context.Process(target=_make, args=(prefix, ROUNDS, lost)) for _ in range(2)]
    for process in sweepers + makers:
        process.start()
    for process in makers:
        process.join(120)
    stop.set()
    for process in sweepers:
        process.join(30)
    assert [p.exitcode for p in makers] == [0, 0], "a grader failed to make its run folder"
    assert [p.exitcode for p in sweepers] == [0, 0], "a sweep failed on a folder that vanished under it"
    assert lost.value == 0, f"{lost.value} live run folders were swept"


def test_a_folder_whose_grader_is_gone_is_swept_and_a_young_unlocked_one_kept(tmp_path):
    dead = tmp_path / (run_folders.RUN_PREFIX + "dead")
    (dead / "job0").mkdir(parents=True)
    (dead / ".lock").write_text("")  # nobody holds it
    young = tmp_path / (run_folders.RUN_PREFIX + "young")
    young.mkdir()  # just made: its lock not in yet
    old = tmp_path / (run_folders.RUN_PREFIX + "old")
    old.mkdir()
    then = time.time() - run_folders.UNLOCKED_AGE_S - 60
    os.utime(old, (then, then))
    assert sweep_stale_runs(tmp_path) == 2
    assert not dead.exists() and young.exists() and not old.exists()


def test_a_locked_folder_is_held_and_kept_by_a_sweep():
    path, fd = locked_folder(run_folders.RUN_PREFIX + "test-")
    try:
        other = os.open(path / ".lock", os.O_RDWR)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
        sweep_stale_runs(path.parent)
        assert (path / ".lock").exists()
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)
