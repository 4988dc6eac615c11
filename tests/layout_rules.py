"""The import rules import-linter cannot state; every other one is a contract in .importlinter.

- app.py and class_app.py are single files, which import-linter cannot take as root packages: here, neither
  imports a page (Streamlit runs each page by its path; the `pages` contract covers every other importer).
- Every top-level folder of Python code but tests/ is one of .importlinter's root packages and has its place in
  the `rooms` contract: a package left out would be checked by no contract.
- No import cycle runs through a package's own __init__.py: the `acyclic` contract compares a package's
  children with each other, never with the package itself.
- course.common and grader.harness import only the third-party packages their docstrings name (a contract can
  forbid a package, not allow a list).
- A test file (tests/*.py) reaches no private name (`_name`) of a project package, nor of another test module:
  a test goes through a module's public functions, and helpers several test files share live under public
  names in the tests/*_support.py modules (import-linter sees imports of modules, not the names used).
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



PROJECT_PACKAGES = ("app_pages", "bench", "classroom", "course", "exercises", "grader", "solutions")
SCRIPTS = "bench"  # its files are also imported by their bare names (tests put bench/ on sys.path)
NAME_ARGUMENT = {"getattr", "setattr", "delattr", "hasattr"}  # the builtins' and monkeypatch's (thing, "name")


def _private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _text(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _PrivateReach(ast.NodeVisitor):
    """Walks one test file: the names its imports bind to project or test modules (or to what it imported
    from them), then each private name it reaches through one of them."""

    def __init__(self, test_modules, scripts):
        self.test_modules, self.scripts = set(test_modules), set(scripts)
        self.bound = {}  # a name in the file -> the dotted module (or module.name) it stands for
        self.found = []  # (line, text)

    def _kind(self, dotted):
        top = dotted.split(".")[0]
        if top in PROJECT_PACKAGES or top in self.scripts:
            return "a project module's"
        if top == "tests" or top in self.test_modules:
            return "a test module's"
        return None

    def _report(self, node, dotted, name):
        self.found.append((node.lineno, f"{dotted}.{name} ({self._kind(dotted)} private name)"))

    def visit_Import(self, node):
        for alias in node.names:
            if not self._kind(alias.name):
                continue
            top = alias.name.split(".")[0]
            self.bound[alias.asname or top] = alias.name if alias.asname else top
            parts = alias.name.split(".")
            for depth, part in enumerate(parts[1:], 1):  # import classroom.data._private
                if _private(part):
                    self._report(node, ".".join(parts[:depth]), part)
                    break

    def visit_ImportFrom(self, node):
        if node.level or not node.module or not self._kind(node.module):
            return
        for alias in node.names:
            if _private(alias.name):
                self._report(node, node.module, alias.name)
            self.bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def _dotted(self, node):
        """The dotted name an expression stands for (`queue` -> classroom.line.queue), None if not a project or
        test module's (or something imported from one)."""
        if isinstance(node, ast.Name):
            return self.bound.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def visit_Attribute(self, node):
        base = self._dotted(node.value)
        if base and _private(node.attr):
            self._report(node, base, node.attr)
        self.generic_visit(node)

    def visit_Call(self, node):
        function = node.func
        called = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
        args = node.args
        if called in NAME_ARGUMENT and len(args) >= 2:  # getattr(queue, "_candidates"), monkeypatch.setattr(...)
            base, name = self._dotted(args[0]), _text(args[1])
            if base and name and _private(name):
                self._report(node, base, name)
        if called in {"setattr", "delattr"} and args and "." in (_text(args[0]) or ""):  # monkeypatch's "a.b._c"
            dotted, name = _text(args[0]).rsplit(".", 1)
            if self._kind(dotted) and _private(name):
                self._report(node, dotted, name)
        self.generic_visit(node)


def private_reaches(source, test_modules=(), scripts=(), filename="<test>"):
    """['12: classroom.line.queue._candidates (a project module's private name)', ...]: each place a test
    file's source reaches a private name (one underscore first, not a dunder) of a project package, or of
    another test module. test_modules: the names of the files in tests/; scripts: of those in bench/."""
    walker = _PrivateReach(test_modules, scripts)
    walker.visit(ast.parse(source, filename))
    return [f"{line}: {text}" for line, text in sorted(walker.found)]


def private_reach_violations(root):
    """['tests/test_x.py:12: ...', ...] over every Python file directly in tests/ (its folders hold learner
    files, data the tests grade)."""
    root = Path(root)
    files = sorted((root / "tests").glob("*.py"))
    test_modules = {path.stem for path in files}
    scripts = {path.stem for path in (root / SCRIPTS).glob("*.py")}
    return [f"tests/{path.name}:{found}" for path in files
            for found in private_reaches(path.read_text(encoding="utf-8"), test_modules, scripts, str(path))]
