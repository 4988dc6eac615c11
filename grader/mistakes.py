"""Known mistakes as runnable code: the reference with one place edited.

`MistakeVariants` holds one grading run's variants: `modules(ex_id, mistake)`
builds, in a temporary package, a copy of every reference file with the
mistake's edit applied to the exercise's file, and returns a `modules(name)`
function for the procedures; `results(ex_id, mistake, index, check)` is a
variant's results on check `index`, computed once per run. Closing the run
removes the packages (files and imported modules). These variants are our
own code, so they run in the grader's process.
"""

import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from course.common.exercise_index import get as get_exercise

from .harness import load_procedures, seed_call
from .variants import pin_text

SOLUTIONS_DIR = Path(__file__).resolve().parent.parent / "solutions"
PROCEDURES = load_procedures()


def apply_mistake(source, mistake):
    """The reference source with the mistake's edits; each edit must match once."""
    for old, new in ((mistake.old, mistake.new),) + tuple(mistake.also):
        count = source.count(old)
        if count != 1:
            raise ValueError(f"mistake {mistake.id!r}: its text occurs {count} times in the reference, not once")
        source = source.replace(old, new)
    return source


class MistakeVariants:
    """The known mistakes' variants of one grading run and their results (a context manager)."""

    def __init__(self):
        self._root = None
        self._packages = {}  # (ex_id, mistake id) -> package name
        self._results = {}  # (ex_id, mistake id, check index) -> results, or None if the variant raised

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.close()

    def modules(self, ex_id, mistake, value=None):
        """modules(name) for the reference package with this mistake applied (its variant parameter's default
        pinned to `value`, as a learner's file on that variant has it; None: the published default)."""
        key = (ex_id, mistake.id, value)
        if key not in self._packages:
            self._packages[key] = self._build(ex_id, mistake, value)
        package = self._packages[key]

        def modules(name):
            return importlib.import_module(f"{package}.{name}")

        return modules

    def results(self, ex_id, mistake, index, check, value=None):
        """The variant's results on check number `index` of the exercise (seeded like that call; defaults pinned
        to an exercise variant's `value`), or None if it raises."""
        key = (ex_id, mistake.id, index, value)
        if key not in self._results:
            try:
                seed_call(index)
                self._results[key] = PROCEDURES[check.procedure](self.modules(ex_id, mistake, value), check.spec)
            except Exception:
                self._results[key] = None
        return self._results[key]

    def on_value(self, value):
        """These variants with `results(ex_id, mistake, index, check)` pinned to an exercise variant's value."""
        return _Pinned(self, value)

    def close(self):
        """Forget every variant: its results, its imported modules and its files."""
        for package in self._packages.values():
            for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
                del sys.modules[name]
        self._packages.clear()
        self._results.clear()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def _build(self, ex_id, mistake, value=None):
        """Copy the references with the mistake applied (and, on a variant, its parameter's default pinned to
        the variant's value) into this run's folder and import the package."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="attention-lab-mistake-"))
        exercise = get_exercise(ex_id)
        # unique across runs, even concurrent ones: named after this run's folder (mkdtemp's name is unique)
        package = f"_mistake_{self._root.name.rpartition('-')[2]}_{ex_id}_{len(self._packages)}"
        # the other references are links to the originals (copying them was most of a build's time); the
        # mistaken file is written as a file of its own, never through its link
        shutil.copytree(SOLUTIONS_DIR, self._root / package, ignore=shutil.ignore_patterns("__pycache__"),
                        copy_function=os.symlink)
        target = self._root / package / exercise.filename
        text = target.read_text(encoding="utf-8")
        target.unlink()
        pins = "" if value is None else "\n" + pin_text(ex_id, value)
        target.write_text(apply_mistake(text, mistake) + pins, encoding="utf-8")
        sys.path.insert(0, str(self._root))
        try:
            importlib.import_module(package)
        finally:
            sys.path.remove(str(self._root))
        return package


class _Pinned:
    """MistakeVariants whose results are run with the variant parameter's default pinned to one value."""

    def __init__(self, variants, value):
        self._variants, self._value = variants, value

    def results(self, ex_id, mistake, index, check):
        """As MistakeVariants.results, pinned to this value."""
        return self._variants.results(ex_id, mistake, index, check, self._value)
