"""The grader's run folders in the temp folder: made already locked, swept once their grader is gone.

Every grader process (the CLI, a class worker, the app's grading server) makes a
folder named RUN_PREFIX... for each run, and one for its warm server, and holds
an flock on the folder's `.lock` while it lives; before each run it sweeps the
folders whose lock is free (their grader was killed). Several graders share one
temp folder, so:
- a folder shows its `.lock` only once that lock is held: the lock file is made
  and locked under a name no sweep looks at, then renamed into the new folder
  (a sweep that saw the `.lock` of a folder between its creation and its
  locking would take it for a dead grader's and remove a live run);
- a folder without a `.lock` (just made, or an older grader's) goes only when it
  is over an hour old and no running process names it on its command line;
- a folder that vanishes while a sweep looks at it (its grader removed it) is
  passed over, never an error.
"""

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

RUN_PREFIX = "attention-lab-grade-"
UNLOCKED_AGE_S = 3600  # a folder without a lock goes only when older than this
_LOCK_PREFIX = ".attention-lab-lock-"  # a lock file being made (no sweep looks at these names)


def locked_folder(prefix=RUN_PREFIX):
    """A new folder prefix... in the temp folder whose `.lock` this process holds -> (path, lock fd)."""
    fd, made = tempfile.mkstemp(prefix=_LOCK_PREFIX)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=os.path.dirname(made)))
        os.rename(made, path / ".lock")  # the lock follows the file: the folder's lock is held from now on
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(made)
        raise
    return path, fd


def sweep_stale_runs(folder=None):
    """Remove run folders whose grader is gone (their lock is free); returns how many."""
    removed = 0
    folder = Path(folder or tempfile.gettempdir())
    for path in folder.glob(RUN_PREFIX + "*"):
        try:
            fd = os.open(path / ".lock", os.O_RDWR)
        except FileNotFoundError:
            if _young_or_named(path):
                continue
            fd = None
        except OSError:
            continue
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
        except BlockingIOError:
            pass  # a running grader holds it
        finally:
            if fd is not None:
                os.close(fd)
    return removed


def _young_or_named(path):
    """Must a folder without a lock stay: it is under UNLOCKED_AGE_S old, a process names it, or it is gone?"""
    try:
        young = time.time() - path.stat().st_mtime < UNLOCKED_AGE_S
    except OSError:  # removed meanwhile by its own grader
        return True
    return young or _named_by_a_process(path)


def _named_by_a_process(path):
    """Does any running process have path on its command line (an older grader's server)?"""
    needle = str(path).encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if needle in Path(f"/proc/{entry}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False

