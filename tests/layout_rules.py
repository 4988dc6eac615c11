"""The project's import rules, checked on source text (no module is imported).

`import_graph(root)` maps each project module to the project modules it imports
(anywhere in the file: a lazy import inside a function is still a dependency);
`violations(graph)` lists every edge that breaks a rule and every cycle.
"""

import ast
from pathlib import Path

PACKAGES = ("app", "app_pages", "course", "grader", "classroom", "solutions", "exercises", "bench")
# (importer prefix, forbidden prefix, why)
RULES = (
    ("", "app_pages.", "nothing imports app_pages/: a page is an entry point, its logic lives in course/"),
    ("", "classroom.app_pages.", "nothing imports classroom/app_pages/: a class page is an entry point"),
    ("app_pages", "classroom", "pages never import classroom/: they ask course.app.learner.current()"),
    ("course.translation", "course.app", "the translation stack never imports the app package"),
    ("course.translation", "course.lessons", "the translation stack does not depend on chapter code"),
    ("course.lessons", "course.app", "lessons are pure maths, without the app package"),
    ("course.lessons", "course.translation", "lessons do not depend on the translation stack"),
    ("course.common", "course.app", "course.common imports nothing else from course/"),
    ("course.common", "course.lessons", "course.common imports nothing else from course/"),
    ("course.common", "course.translation", "course.common imports nothing else from course/"),
    ("course", "grader", "course/ never imports the grader (the app runs it in a child process)"),
    ("course", "classroom", "course/ does not depend on class mode"),
    ("grader", "course.app", "the grader only reports: the mode's Learner (course.app, classroom) records"),
    ("classroom.views", "classroom.grading", "the class's web side reads verdicts through classroom.feedback, not the worker"),
    ("classroom.web", "classroom.grading", "the class's web side reads verdicts through classroom.feedback, not the worker"),
    ("classroom.learner", "classroom.grading", "the class's web side reads verdicts through classroom.feedback, not the worker"),
    ("classroom.app_pages", "classroom.grading",
     "the class's web side reads verdicts through classroom.feedback, not the worker"),
    ("solutions", "course", "the references are self-contained"),
    ("exercises", "course", "the exercise stubs are self-contained"),
    ("grader.harness", "", "the sandbox harness imports nothing from the project (it is copied into the sandbox)"),
)
HARNESS_OWN = "grader.harness"


def module_name(path, root):
    """'course.app.ui' for root/course/app/ui.py; packages by their __init__."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def project_files(root):
    """Every .py file of the project's own packages and app.py."""
    root = Path(root)
    files = [root / "app.py"] if (root / "app.py").is_file() else []
    for package in PACKAGES:
        if (root / package).is_dir():
            files += sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)
    return files


def _resolve(node, current, is_package):
    """(module, submodule or None) for each name an import node brings in (relative imports resolved):
    `from a import b` depends on a.b when that is a module, else on a."""
    if isinstance(node, ast.Import):
        return [(alias.name, None) for alias in node.names]
    base = current if is_package else current.rpartition(".")[0]
    for _ in range(max(node.level - 1, 0)):
        base = base.rpartition(".")[0]
    prefix = (base + "." if base and node.level else "") + (node.module or "")
    prefix = prefix.rstrip(".")
    return [(prefix, f"{prefix}.{alias.name}") for alias in node.names]


def import_graph(root):
    """{module: set of project modules it imports}."""
    root = Path(root)
    files = project_files(root)
    modules = {module_name(p, root): p for p in files}
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for module, submodule in _resolve(node, name, path.name == "__init__.py"):
                    target = submodule if submodule in modules else module
                    if target in modules and target != name:
                        targets.add(target)
        graph[name] = targets
    return graph


def _under(module, prefix):
    return prefix == "" or module == prefix.rstrip(".") or module.startswith(prefix.rstrip(".") + ".")


def rule_violations(graph):
    """['a -> b: why', ...] for every import that breaks a rule."""
    found = []
    for importer, targets in sorted(graph.items()):
        for target in sorted(targets):
            for who, forbidden, why in RULES:
                if not _under(importer, who):
                    continue
                if who == HARNESS_OWN and _under(target, HARNESS_OWN):
                    continue  # the harness's own modules
                if forbidden == "" and who == HARNESS_OWN or forbidden and _under(target, forbidden):
                    found.append(f"{importer} -> {target}: {why}")
    return found


def cycles(graph):
    """Each import cycle once, as a list of modules [a, b, ..., a]."""
    found, seen_sets = [], set()
    index, low, stack, on_stack, counter = {}, {}, [], set(), [0]

    def strongconnect(v):  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 and frozenset(component) not in seen_sets:
                seen_sets.add(frozenset(component))
                found.append(sorted(component) + [sorted(component)[0]])

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found
