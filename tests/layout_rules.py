"""The import rules import-linter cannot state; every other one is a contract in .importlinter.

- app.py and class_app.py are single files, which import-linter cannot take as root packages: here, neither
  imports a page (Streamlit runs each page by its path; the `pages` contract covers every other importer).
- Every top-level folder of Python code but tests/ is one of .importlinter's root packages and has its place in
  the `rooms` contract: a package left out would be checked by no contract.
- No import cycle runs through a package's own __init__.py: the `acyclic` contract compares a package's
  children with each other, never with the package itself.
- course.common and grader.harness import only the third-party packages their docstrings name (a contract can
  forbid a package, not allow a list).
"""

import ast
import sys
from pathlib import Path

from importlinter import api

ENTRY_POINTS = ("app.py", "class_app.py")
PAGES = ("app_pages", "classroom.app_pages")
NOT_PACKAGES = ("tests",)  # top-level folders of Python files that are no part of the product
THIRD_PARTY = {  # package: the third-party packages its docstring allows
    "course.common": {"altair", "numpy", "pandas", "pyarrow"},
    "grader.harness": {"torch", "_harness"},  # _harness: the harness's own name inside the sandbox
}


def configuration(root):
    """.importlinter as import-linter reads it: {"session_options": ..., "contracts_options": [...]}."""
    return api.read_configuration(str(Path(root) / ".importlinter"))


def _under(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def entry_point_violations(root):
    """['app.py -> app_pages.notes: ...'] for each page an entry point imports (a lazy import counts)."""
    found = []
    for name in ENTRY_POINTS:
        path = Path(root) / name
        if not path.is_file():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            found += [f"{name} -> {target}: an entry point routes to pages by path, never imports one"
                      for target in targets if any(_under(target, page) for page in PAGES)]
    return found


def unchecked_packages(root, config):
    """Top-level packages no contract sees: folders of Python code (but tests/) missing from root_packages,
    and root packages missing from the `rooms` layers."""
    root = Path(root)
    on_disk = {p.name for p in root.iterdir()
               if p.is_dir() and not p.name.startswith(".") and p.name not in NOT_PACKAGES and any(p.glob("*.py"))}
    roots = set(config["session_options"]["root_packages"])
    [rooms] = [c for c in config["contracts_options"] if c["id"] == "rooms"]
    layered = {name.strip() for layer in rooms["layers"] for name in layer.replace(":", "|").split("|")}
    return sorted((on_disk - roots) | (roots - layered))


def init_cycles(graph):
    """[(package, module)] for each package whose own __init__.py imports, directly or not, a module of its
    own that imports the package's __init__.py back."""
    found = []
    for module in sorted(graph.modules):
        if graph.is_module_squashed(module):
            continue
        parts = module.split(".")
        for depth in range(1, len(parts)):
            package = ".".join(parts[:depth])
            if package in graph.modules and graph.chain_exists(importer=package, imported=module) \
                    and graph.chain_exists(importer=module, imported=package):
                found.append((package, module))
    return found


def third_party_imports(graph, package):
    """{top-level name} of every module outside the project and the standard library that `package` (or a
    module in it) imports directly."""
    roots = {m.split(".")[0] for m in graph.modules if not graph.is_module_squashed(m)}
    found = set()
    for module in {package} | graph.find_descendants(package):
        for target in graph.find_modules_directly_imported_by(module):
            top = target.split(".")[0]
            if top not in roots and top not in sys.stdlib_module_names:
                found.add(top)
    return found


def third_party_violations(graph):
    """['course.common imports torch', ...] for each third-party package a package's docstring does not allow."""
    return [f"{package} imports {name}" for package, allowed in THIRD_PARTY.items()
            for name in sorted(third_party_imports(graph, package) - allowed)]
