"""The layout's import rules (tests/layout_rules.py) hold for the project, and the checker catches breaks."""

import textwrap

from layout_rules import cycles, import_graph, rule_violations

from course.common.pages_index import PROJECT_ROOT


def test_the_project_breaks_no_import_rule():
    assert rule_violations(import_graph(PROJECT_ROOT)) == []


def test_the_project_has_no_import_cycle():
    assert cycles(import_graph(PROJECT_ROOT)) == []


def test_course_is_split_into_its_four_packages():
    graph = import_graph(PROJECT_ROOT)
    flat = sorted(m for m in graph if m.count(".") == 1 and m.startswith("course."))
    assert flat == ["course.app", "course.common", "course.lessons", "course.translation"]


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return import_graph(tmp_path)


def test_the_checker_finds_a_forbidden_direction(tmp_path):
    graph = _tree(tmp_path, {
        "course/__init__.py": "",
        "course/app/__init__.py": "",
        "course/app/ui.py": "",
        "course/translation/__init__.py": "",
        "course/translation/demos.py": "def f():\n    from course.app import ui\n",  # lazy, still counted
        "app_pages/p.py": "",
        "course/lessons/__init__.py": "",
        "course/lessons/ch01.py": "import app_pages.p\n",
        "grader/__init__.py": "",
        "grader/harness/__init__.py": "",
        "grader/harness/child.py": "from course.app.ui import x\nfrom . import registry\n",
        "grader/harness/registry.py": "",
    })
    found = rule_violations(graph)
    assert any(v.startswith("course.translation.demos -> course.app.ui") for v in found)
    assert any(v.startswith("course.lessons.ch01 -> app_pages.p") for v in found)
    assert any(v.startswith("grader.harness.child -> course.app.ui") for v in found)
    assert not any("grader.harness.registry" in v for v in found)  # the harness may import itself


def test_the_checker_finds_cycles_through_relative_and_lazy_imports(tmp_path):
    graph = _tree(tmp_path, {
        "grader/__init__.py": "",
        "grader/cli.py": "from .notebooks import main\n",
        "grader/notebooks.py": "def g():\n    from .cli import print_table\n",
        "grader/harness/__init__.py": "",
        "grader/harness/demo.py": "from .procedures import procedure\n",
        "grader/harness/procedures.py": "from . import demo\n",
        "grader/core.py": "from .cli import x\n",  # on no cycle
    })
    assert cycles(graph) == [["grader.cli", "grader.notebooks", "grader.cli"],
                             ["grader.harness.demo", "grader.harness.procedures", "grader.harness.demo"]]


def test_the_checker_keeps_pages_and_course_away_from_classroom(tmp_path):
    graph = _tree(tmp_path, {
        "app.py": "from classroom import learner\n",  # the entry point decides the mode
        "app_pages/notes.py": "from classroom import web\n",
        "app_pages/practice.py": "def f():\n    from classroom.views import history\n",
        "classroom/__init__.py": "",
        "classroom/web.py": "from course.app import ui\n",
        "classroom/views.py": "from . import web\n",
        "classroom/learner.py": "from . import web\n",
        "classroom/app_pages/practice.py": "from classroom import views\n",  # a class page, with classroom
        "course/__init__.py": "",
        "course/app/__init__.py": "",
        "course/app/ui.py": "",
        "course/app/learner.py": "import classroom.learner\n",
    })
    found = rule_violations(graph)
    assert any(v.startswith("app_pages.notes -> classroom.web: pages never import classroom/") for v in found)
    assert any(v.startswith("app_pages.practice -> classroom.views: pages never import classroom/") for v in found)
    assert any(v.startswith("course.app.learner -> classroom.learner: course/") for v in found)
    assert not any(v.startswith(("app ->", "classroom.")) for v in found), found
