"""Known mistakes as runnable code: the reference with one place edited.

`mutant_modules(ex_id, mistake)` builds, in a temporary package, a copy of
every reference file with the mistake's edit applied to the exercise's file,
and returns a `modules(name)` function for the procedures. These variants are
our own code, so they run in the grader's process.
"""

import atexit
import importlib
import itertools
import shutil
import sys
import tempfile
from pathlib import Path

from course.common.exercise_index import get as get_exercise

SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"
_CACHE = {}
_COUNTER = itertools.count()


def apply_mistake(source, mistake):
    """The reference source with the mistake's edits; each edit must match once."""
    for old, new in ((mistake.old, mistake.new),) + tuple(mistake.also):
        count = source.count(old)
        if count != 1:
            raise ValueError(f"mistake {mistake.id!r}: its text occurs {count} times in the reference, not once")
        source = source.replace(old, new)
    return source


def mutant_modules(ex_id, mistake):
    """modules(name) for the reference package with this mistake applied."""
    key = (ex_id, mistake.id)
    if key not in _CACHE:
        exercise = get_exercise(ex_id)
        root = Path(tempfile.mkdtemp(prefix="attention-lab-mistake-"))
        # Submodules import lazily, so the files stay until this process ends.
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        package = f"_mistake_{ex_id}_{next(_COUNTER)}"
        shutil.copytree(SOLUTIONS_DIR, root / package, ignore=shutil.ignore_patterns("__pycache__"))
        target = root / package / exercise.filename
        target.write_text(apply_mistake(target.read_text(encoding="utf-8"), mistake), encoding="utf-8")
        sys.path.insert(0, str(root))
        try:
            importlib.import_module(package)
        finally:
            sys.path.remove(str(root))
        _CACHE[key] = package

    package = _CACHE[key]

    def modules(name):
        return importlib.import_module(f"{package}.{name}")

    return modules
