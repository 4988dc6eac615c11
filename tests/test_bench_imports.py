"""The bench/ scripts run by hand, never by another test: every name they import from the project must exist.

(A module that moves or a function that goes would otherwise break a bench silently until someone measures.)
"""

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ("course", "classroom", "grader", "solutions")
BENCHES = sorted((ROOT / "bench").glob("*.py"))


def project_imports(path):
    """(module, name or None) for each `import m` / `from m import name` of a project module in path."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, None) for alias in node.names if alias.name.split(".")[0] in PROJECT)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module.split(".")[0] in PROJECT:
            yield from ((node.module, alias.name) for alias in node.names)


def test_the_parser_finds_an_import_inside_a_function():
    found = list(project_imports(ROOT / "bench" / "app.py"))
    assert ("course.common", "pages_index") in found


@pytest.mark.parametrize("path", BENCHES, ids=[p.stem for p in BENCHES])
def test_every_project_name_a_bench_imports_exists(path):
    missing = []
    for module, name in project_imports(path):
        loaded = importlib.import_module(module)
        if name is not None and not hasattr(loaded, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ModuleNotFoundError:
                missing.append(f"{module}.{name}")
    assert missing == [], f"{path.name} imports names that do not exist: {missing}"
