"""Each install holds what its side imports: requirements.txt the learner's (the app in self-study, the grader,
the exercises), requirements-class.txt class mode's, requirements-dev.txt the tests' and the benches'.

Read from the code with `ast` (every import, also those inside functions), each module mapped to the
distribution that installed it (importlib.metadata) and checked against the requirement file's packages and
everything they require in turn. An import inside `try: ... except ImportError` is optional and not counted.
"""

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
# the project's own modules: its packages, and the tests' and benches' modules imported by name (pytest's rootdir
# and bench's own folder are on sys.path), and the sandboxed job's copy of grader/harness
OWN = ({"app_pages", "bench", "classroom", "course", "exercises", "grader", "notebooks", "solutions", "tests", "app",
        "_harness"} | {path.stem for folder in ("tests", "bench") for path in (ROOT / folder).glob("*.py")})
LEARNER = ["app.py", "app_pages", "course", "grader", "exercises", "solutions", "classroom/data/address.py"]
SIDES = {"requirements.txt": LEARNER,
         "requirements-class.txt": LEARNER + ["classroom"],
         "requirements-dev.txt": LEARNER + ["classroom", "tests", "bench"]}


def python_files(places):
    for place in places:
        path = ROOT / place
        yield from ([path] if path.is_file() else sorted(path.rglob("*.py")))


def optional_imports(tree):
    """ids of the Import nodes inside a `try` whose handlers catch ImportError."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any("ImportError" in ast.unparse(h.type or ast.Name("BaseException"))
                                             for h in node.handlers):
            found |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return found


def imported_modules(places):
    """{top-level module: first file that imports it} for the third-party imports of the places' files."""
    found = {}
    for path in python_files(places):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:  # a learner's broken file among the tests' samples: it is graded, never imported
            continue
        optional = optional_imports(tree)
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OWN and top != "__future__":
                    found.setdefault(top, path.relative_to(ROOT).as_posix())
    return found


def requirement_lines(file):
    """The requirement strings of a requirements file, following its `-r` includes."""
    lines = []
    for raw in (ROOT / file).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line.startswith("-r "):
            lines += requirement_lines(line[3:].strip())
        elif line:
            lines.append(line)
    return lines


def installed_closure(file):
    """Canonical names of the distributions a requirements file installs: its own and all they require."""
    seen, todo = set(), [Requirement(line) for line in requirement_lines(file)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen:
            continue
        seen.add(name)
        for extra in req.extras or {""}:
            for spec in metadata.requires(req.name) or []:
                dep = Requirement(spec)
                if dep.marker is None or dep.marker.evaluate({"extra": extra}):
                    todo.append(dep)
    return seen


def test_the_requirement_files_build_on_each_other_and_pin_every_package():
    assert requirement_lines("requirements.txt")[0].startswith("torch==2.13.0")
    learner = requirement_lines("requirements.txt")
    assert requirement_lines("requirements-class.txt")[:len(learner)] == learner
    assert requirement_lines("requirements-dev.txt")[:len(learner)] == learner
    for file in SIDES:
        unpinned = [line for line in requirement_lines(file) if not re.search(r"==\d", line)]
        assert not unpinned, f"{file}: pin every package (name==version): {unpinned}"


def test_the_learners_install_holds_no_class_or_test_package():
    learner = {canonicalize_name(Requirement(line).name) for line in requirement_lines("requirements.txt")}
    for heavy in ("sqlalchemy", "psycopg", "selenium", "pytest", "copydetect", "pylti1p3", "ipykernel"):
        assert heavy not in learner, heavy


@pytest.mark.parametrize("file", list(SIDES))
def test_every_imported_package_is_installed_by_its_sides_requirements(file):
    packages = metadata.packages_distributions()
    closure = installed_closure(file)
    missing = {}
    for module, where in imported_modules(SIDES[file]).items():
        dists = {canonicalize_name(d) for d in packages.get(module, [])}
        if not dists & closure:
            missing[module] = (where, sorted(dists) or "not installed here")
    assert not missing, f"{file} lacks the packages of these imports: {missing}"


def test_the_check_sees_an_import_the_learners_install_lacks():
    """The check itself: the class side's imports are not all in the learner's install (sqlalchemy is not)."""
    packages = metadata.packages_distributions()
    closure = installed_closure("requirements.txt")
    class_only = imported_modules(["classroom/data/db.py"])
    assert "sqlalchemy" in class_only
    assert not {canonicalize_name(d) for d in packages["sqlalchemy"]} & closure
