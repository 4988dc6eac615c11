"""Automatic mutants of the references: built, run on an exercise's checks, and cached on disk.

Each mutant (grader/diagnosis/operators.py) is executed as a module in the
grader's own process, never in the learner's sandbox: it is reference-derived
code, trusted like the known mistakes (grader/mistakes.py), and only its results
are compared with the data the learner's sandbox sent back.

The cache holds, per exercise, every mutant whose results differ from the
reference's on at least one check: its description, the checks it fails and its
results there. It is keyed on a hash of solutions/, the grader sources those
results depend on (checks, procedures, comparison, this engine) and torch's
version, so it is built once per grader version (`ensure`, in a bounded fork,
outside the judging deadline, at the first failing file of an exercise or by
`python -m grader mutants`), not per run. Exercises whose
cases are drawn per run (CASES_DRAWN) cache the mutants' sources only; their
results are computed when a learner's file fails (pure Python, milliseconds).
"""

import contextlib
import fcntl
import functools
import hashlib
import os
import signal
import tempfile
import time
import types
from pathlib import Path

import torch

from course.common.exercise_index import get as get_exercise
from course.common.paths import PROJECT_ROOT

from .. import bounded
from .. import checks as checks_registry
from ..compare import compare_results, judged_keys
from ..harness import load_procedures, seed_call
from .operators import mutations

PROCEDURES = load_procedures()
CALL_LIMIT_S = 30.0  # a mutant call that runs longer (an endless loop) is dropped; generous, so that a
# loaded machine never drops a slow but finite mutant (only pure-Python loops can hang)
CALL_CPU_FLOOR_S = 3.0  # at build time a call is also dropped past this much CPU time, or CALL_CPU_FACTOR times
CALL_CPU_FACTOR = 20  # the reference's CPU time on that check if more: CPU time does not grow with the machine's load,
# so an endless loop is given up in seconds instead of CALL_LIMIT_S, and a finite mutant is still kept
DRAWN_CALL_LIMIT_S = 0.5  # CPU seconds per call of a mutant run at grading time (explain.py), for cases drawn per
# run (pure Python: an endless loop if longer); the build gives such a call up at the same limit
BUILD_TIMEOUT_S = 600
BUILD_MEMORY_MB = 2048
GRADER_DIR = Path(__file__).resolve().parent.parent
RESULT_SOURCES = ("checks", "harness", "diagnosis/operators.py", "diagnosis/mutants.py", "compare.py")  # what
# a mutant's cached results depend on (not explain.py, which only reads them)
SOLUTIONS_DIR = PROJECT_ROOT / "solutions"


def cache_dir():
    """Where mutant caches live (ATTENTION_LAB_MUTANT_CACHE, else .attention_lab/mutants, else a temp folder)."""
    configured = os.environ.get("ATTENTION_LAB_MUTANT_CACHE")
    path = Path(configured) if configured else PROJECT_ROOT / ".attention_lab" / "mutants"
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    path = Path(tempfile.gettempdir()) / f"attention-lab-mutants-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def source_digest(folders):
    """A hash of the .py files under these folders and torch's version."""
    digest = hashlib.sha256(torch.__version__.encode())
    for folder in map(Path, folders):
        for path in sorted(folder.rglob("*.py")) if folder.is_dir() else [folder]:
            digest.update(str(path.relative_to(folder.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def version_key():
    """This process's grader version, as far as mutants go: the references, the checks, the procedures, the
    comparison and this engine (as imported), and torch."""
    return source_digest((SOLUTIONS_DIR,) + tuple(GRADER_DIR / part for part in RESULT_SOURCES))


def cache_path(ex_id):
    return cache_dir() / f"{ex_id}-{version_key()}.pt"


class _CallTimeout(Exception):
    pass


def _on_alarm(*_):
    raise _CallTimeout("ran past its time limit")


def mutant_module(ex_id, source, number):
    """The mutated exercise file as a module of the solutions package (its relative imports reach the references)."""
    name = get_exercise(ex_id).module
    module = types.ModuleType(f"solutions._mutant_{name}_{number}")
    module.__package__ = "solutions"
    module.__file__ = f"<mutant {number} of {name}>"
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # our own reference-derived code
    return module


def run_mutant(ex_id, module, index, check, limit_s=CALL_LIMIT_S, cpu_limit_s=None):
    """The mutant's results on check `index` ({"error": (type, message)} if it raises or runs past limit_s seconds,
    or past cpu_limit_s seconds of this process's CPU time)."""
    import importlib

    own = get_exercise(ex_id).module

    def modules(name):
        return module if name == own else importlib.import_module(f"solutions.{name}")

    previous = signal.signal(signal.SIGALRM, _on_alarm)
    previous_prof = signal.signal(signal.SIGPROF, _on_alarm) if cpu_limit_s else None
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    if cpu_limit_s:
        signal.setitimer(signal.ITIMER_PROF, cpu_limit_s)
    try:
        seed_call(index)
        return PROCEDURES[check.procedure](modules, check.spec)
    except Exception as err:
        return {"error": (type(err).__name__, str(err)[:300])}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if cpu_limit_s:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous_prof)


def timed_out(results):
    """Did a mutant's call run past its limit (an endless loop)?"""
    return results.get("error", ("",))[0] == _CallTimeout.__name__


def observable(reference):
    """The result keys a mutant is recognised by (values, not gradients)."""
    return [k for k in judged_keys(reference) if not k.startswith(("grad.", "input_after.", "raised_"))]


def differs(reference, results, check):
    """Does a mutant's result on a check differ from the reference's (or raise)?"""
    if "error" in results:
        return True
    return compare_results(reference, results, observable(reference), check.tolerance_dtype) is not None


def evaluate(ex_id, entries, checks, references, cpu_limits=None):
    """Fill each entry's `fails` ({check index: results there}) by running it; entries that differ nowhere go.
    cpu_limits: per check, the CPU seconds a call may take (none: only CALL_LIMIT_S)."""
    kept = []
    for number, entry in enumerate(entries):
        try:
            module = mutant_module(ex_id, entry["source"], number)
        except Exception:
            continue
        fails = {}
        for index, (check, reference) in enumerate(zip(checks, references)):
            results = run_mutant(ex_id, module, index, check, cpu_limit_s=cpu_limits[index] if cpu_limits else None)
            if timed_out(results):
                fails = None  # an endless loop: not a slip a learner's finished run can match
                break
            if differs(reference, results, check):
                keys = observable(reference)
                fails[index] = results if "error" in results else {k: results[k] for k in keys if k in results}
        if fails:
            kept.append(dict(entry, fails=fails))
    return kept


def describe(mutation):
    """A mutation as cacheable data."""
    return {"source": mutation.source, "op": mutation.op, "function": mutation.function,
            "target": mutation.target, "fields": dict(mutation.fields), "condition": mutation.condition}


def _reference_modules(name):
    import importlib

    return importlib.import_module(f"solutions.{name}")


def reference_results(checks):
    """The references' results on the checks, each call seeded as the grader seeds it -> (results, the CPU limit
    of a mutant's call on each check: CALL_CPU_FACTOR times the reference's CPU time, at least CALL_CPU_FLOOR_S)."""
    results, cpu_limits = [], []
    for index, check in enumerate(checks):
        seed_call(index)
        started = time.process_time()
        results.append(PROCEDURES[check.procedure](_reference_modules, check.spec))
        cpu_limits.append(max(CALL_CPU_FLOOR_S, CALL_CPU_FACTOR * (time.process_time() - started)))
    return results, cpu_limits


def _build(ex_id):
    """Compute and write one exercise's cache (run in a bounded fork)."""
    torch.set_num_threads(1)  # tiny tensors, as in a grading run: more threads only spin on a loaded machine
    source = (SOLUTIONS_DIR / get_exercise(ex_id).filename).read_text(encoding="utf-8")
    entries = [describe(m) for m in mutations(source)]
    module = checks_registry.for_exercise(ex_id)
    drawn = getattr(module, "CASES_DRAWN", False)
    checks = module.build(seed=0) if drawn else module.build()
    references, cpu_limits = reference_results(checks)
    if drawn:  # a kept mutant runs every check again when a file fails, each call under DRAWN_CALL_LIMIT_S of
        # CPU time: one that needs longer never explains a file, so an endless loop is given up at that limit
        cpu_limits = [min(limit, DRAWN_CALL_LIMIT_S) for limit in cpu_limits]
    entries = evaluate(ex_id, entries, checks, references, cpu_limits)
    if drawn:  # a sample draw weeds out the mutants that hang or never differ; the results come per run
        entries = [{k: v for k, v in e.items() if k != "fails"} for e in entries]
    path = cache_path(ex_id)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    torch.save({"drawn": drawn, "mutants": entries}, tmp)
    os.replace(tmp, path)
    for old in path.parent.glob(f"{ex_id}-*.pt"):  # other grader versions' caches
        if old != path:
            old.unlink(missing_ok=True)
    return len(entries)


@contextlib.contextmanager
def build_lock(ex_id):
    """Hold the exercise's build lock (an flock on a file beside its cache), as `ensure` holds it while it builds:
    two processes never build the same cache, and one that waits reads the cache the other wrote."""
    fd = os.open(cache_dir() / f".{ex_id}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def ensure(ex_ids):
    """Build the missing caches of these exercises, each in a bounded fork; returns {ex_id: count or why not}.
    A process that finds another building the same cache waits for it and reads its cache."""
    done = {}
    for ex_id in ex_ids:
        if cache_path(ex_id).exists():
            continue
        with build_lock(ex_id):
            if cache_path(ex_id).exists():  # built by the process that held the lock
                continue
            how, data = bounded.run(lambda ex_id=ex_id: _build(ex_id), BUILD_TIMEOUT_S, BUILD_MEMORY_MB)
        done[ex_id] = data if how == "ok" else how
    return done


def build(ex_ids):
    """Build the caches of these exercises that this grader version lacks (`ensure`) -> (a line per exercise
    built: 'ex03: 12 mutants', or why not: 'ex03: timeout', the exercises whose cache was already there, those
    whose build failed). A build replaces the exercise's caches of other grader versions."""
    built = ensure(ex_ids)
    lines = [f"{ex_id}: {done if isinstance(done, str) else f'{done} mutants'}" for ex_id, done in built.items()]
    return lines, [ex_id for ex_id in ex_ids if ex_id not in built], [e for e, d in built.items() if isinstance(d, str)]


def load(ex_id):
    """The exercise's cached mutants ({"drawn": bool, "mutants": [...]}), or None if not built."""
    path = cache_path(ex_id)
    if not path.exists():
        return None
    try:
        return torch.load(path, weights_only=True)
    except Exception:
        return None
