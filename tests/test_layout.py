"""The project keeps its import contracts (.importlinter, checked by import-linter) and the few rules they cannot
state (tests/layout_rules.py); each contract and each rule breaks on an import planted against it."""

import copy
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import grimp
import pytest
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.layers import LayersContract
from importlinter.contracts.protected import ProtectedContract
from layout_rules import (configuration, entry_point_violations, init_cycles, private_reach_violations,
                          private_reaches, third_party_violations, unchecked_packages)

from course.common.pages_index import PROJECT_ROOT

CONFIG = configuration(PROJECT_ROOT)
CONTRACTS = {c["id"]: c for c in CONFIG["contracts_options"]}
KINDS = {kind.type_name: kind for kind in (AcyclicSiblingsContract, ForbiddenContract, LayersContract,
                                          ProtectedContract)}
# One or more imports that each, added alone, break the contract (importer -> imported).
PLANTS = {
    "rooms": [("course.common.paths", "grader.core"), ("grader.core", "classroom.data.submissions"),
              ("classroom.data.submissions", "app_pages.notes"), ("solutions.ex01_softmax", "exercises.ex00_paths")],
    "learner-code": [("classroom.line.worker", "exercises.ex01_softmax"), ("grader.core", "exercises")],
    "entry": [("course.app.ui", "app"), ("classroom.web.web", "class_app")],
    "pages": [("app_pages.practice", "app_pages.notes"), ("classroom.app_pages.gradebook",
                                                          "classroom.app_pages.practice")],
    "course": [("course.common.paths", "course.app.ui"), ("course.lessons.ch02", "course.translation.vocab"),
               ("course.translation.vocab", "course.lessons.ch02")],
    "course-streamlit": [("course.lessons.ch02", "streamlit"), ("course.common.paths", "streamlit")],
    "grader": [("grader.report", "course.app.ui"), ("grader.checks", "course.lessons.ch02"),
               ("grader.text", "streamlit")],
    "grader-layers": [("grader.text", "grader.core"), ("grader.harness.child", "grader.text"),
                      ("grader.core", "grader.cli")],
    "harness": [("grader.harness.child", "course.common.paths"), ("grader.harness.procedures",
                                                                 "solutions.ex01_softmax")],
    "class-wings": [("classroom.line.queue", "classroom.lti.outbox"), ("classroom.data.submissions", "classroom.lti.outbox"),
                    ("classroom.lti.passback", "classroom.line.queue"), ("classroom.analytics.frames", "classroom.line.queue"),
                    ("classroom.data.models", "classroom.web.access"), ("classroom.web.views", "classroom.app_pages.practice")],
    "class-web": [("classroom.web.views", "classroom.line.grading"),
                  ("classroom.app_pages.practice", "classroom.line.grading")],
    "class-worker": [("classroom.line.queue", "course.app.ui"), ("classroom.line.worker", "streamlit"),
                     ("classroom.data.db", "classroom.web.views")],  # views imports Streamlit: only address's is ignored
    "acyclic": [("classroom.data.models", "classroom.data.submissions"),
                ("grader.harness.registry", "grader.harness.procedures")],
}


@pytest.fixture(scope="module")
def graph():
    """The project's import graph, as lint-imports builds it."""
    options = CONFIG["session_options"]
    return grimp.build_graph(*options["root_packages"], include_external_packages=True, cache_dir=None)


def _kept(contract_id, graph):
    options = CONTRACTS[contract_id]
    contract = KINDS[options["type"]](name=options["name"], session_options=CONFIG["session_options"],
                                      contract_options=options)
    return contract.check(copy.deepcopy(graph), verbose=False).kept


def _planted(graph, importer, imported):
    planted = copy.deepcopy(graph)
    for module in (importer, imported):
        if module not in planted.modules:  # a module nothing imports yet (app.py): outside the project
            planted.add_module(module, is_squashed=True)
    planted.add_import(importer=importer, imported=imported)
    return planted


def _lint_imports(cwd):
    command = Path(sys.executable).parent / "lint-imports"
    return subprocess.run([str(command if command.exists() else shutil.which("lint-imports")), "--no-cache"],
                          cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "400"})  # one line per contract


def test_the_project_keeps_every_import_contract():
    run = _lint_imports(PROJECT_ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in run.stdout, run.stdout


def test_every_contract_has_imports_that_break_it():
    assert sorted(PLANTS) == sorted(CONTRACTS)


@pytest.mark.parametrize("contract_id, importer, imported",
                         [(c, *edge) for c, edges in PLANTS.items() for edge in edges])
def test_a_planted_import_breaks_its_contract(graph, contract_id, importer, imported):
    assert _kept(contract_id, graph)
    assert not _kept(contract_id, _planted(graph, importer, imported)), f"{importer} -> {imported}"


@pytest.mark.parametrize("contract_id, module", [("course", "course.ui"), ("grader-layers", "grader.helpers"),
                                                 ("class-wings", "classroom.helpers")])
def test_a_new_package_must_take_its_place_in_the_layers(graph, contract_id, module):
    planted = copy.deepcopy(graph)
    planted.add_module(module)
    assert not _kept(contract_id, planted)


def test_lint_imports_fails_on_a_forbidden_import_in_a_copy_of_the_project(tmp_path):
    for package in CONFIG["session_options"]["root_packages"]:
        shutil.copytree(PROJECT_ROOT / package, tmp_path / package,
                        ignore=lambda folder, names: [n for n in names if not (n.endswith(".py") or
                                                                               (Path(folder) / n).is_dir())])
    shutil.copy(PROJECT_ROOT / ".importlinter", tmp_path)
    assert _lint_imports(tmp_path).returncode == 0
    notes = tmp_path / "app_pages" / "notes.py"
    notes.write_text(notes.read_text(encoding="utf-8") + "\n\ndef _planted():\n    from classroom.web import web\n",
                     encoding="utf-8")
    run = _lint_imports(tmp_path)
    assert run.returncode == 1
    assert "app_pages.notes -> classroom.web.web" in run.stdout, run.stdout
    assert f"{CONTRACTS['rooms']['name']} BROKEN" in run.stdout.splitlines(), run.stdout


def test_no_entry_point_imports_a_page():
    assert entry_point_violations(PROJECT_ROOT) == []


def test_an_entry_point_importing_a_page_is_found(tmp_path):
    (tmp_path / "app.py").write_text(textwrap.dedent("""\
        import streamlit as st
        from classroom.web import learner
        if st:
            from app_pages import notes
        """), encoding="utf-8")
    (tmp_path / "class_app.py").write_text("import classroom.app_pages.practice\n", encoding="utf-8")
    assert [v.split(":")[0] for v in entry_point_violations(tmp_path)] == [
        "app.py -> app_pages.notes", "class_app.py -> classroom.app_pages.practice"]


def test_every_package_is_checked_by_the_contracts():
    assert unchecked_packages(PROJECT_ROOT, CONFIG) == []


def test_a_package_left_out_of_the_contracts_is_found(tmp_path):
    for name in ("course", "extra", "tests", "docs"):
        (tmp_path / name).mkdir()
    (tmp_path / "course" / "__init__.py").write_text("")
    (tmp_path / "extra" / "tool.py").write_text("")
    (tmp_path / "tests" / "test_x.py").write_text("")
    config = {"session_options": {"root_packages": ["course", "bench"]},
              "contracts_options": [{"id": "rooms", "layers": ["course"]}]}
    assert unchecked_packages(tmp_path, config) == ["bench", "extra"]


def test_no_cycle_runs_through_a_package_init(graph):
    assert init_cycles(graph) == []


def test_a_cycle_through_a_package_init_is_found(graph):
    planted = _planted(graph, "grader.harness", "grader.harness.seeding")  # the __init__ already imports it
    planted.add_import(importer="grader.harness.seeding", imported="grader.harness")
    assert ("grader.harness", "grader.harness.seeding") in init_cycles(planted)


def test_common_and_the_harness_import_only_the_third_party_packages_they_name(graph):
    assert third_party_violations(graph) == []


def test_a_third_party_import_their_docstring_does_not_name_is_found(graph):
    planted = _planted(graph, "course.common.paths", "torch")
    planted.add_import(importer="grader.harness.child", imported="numpy")
    assert third_party_violations(planted) == ["course.common imports torch", "grader.harness imports numpy"]


def test_no_test_reaches_a_private_name_of_the_project_or_of_another_test_module():
    assert private_reach_violations(PROJECT_ROOT) == []


PRIVATE_REACHES = textwrap.dedent("""\
    import os
    import classroom.data.backup
    import grader.diagnosis.mutants as mutants
    from classroom.line import queue
    from classroom.data.variants import _variant_secret, learner_variant
    from grader.warm_server import WarmServer
    from tests.test_classroom_browser import _sign_in, open_page
    from tests import classroom_support as support
    import variant_attack

    def test_planted(monkeypatch, at):
        queue._candidates(None, False, None)
        classroom.data.backup._url("x")
        with mutants._build_lock("ex00"):
            pass
        monkeypatch.setattr(WarmServer, "_next_line", None)
        monkeypatch.setattr("course.app.demo_ui._LOADED", set())
        getattr(queue, "_claim_first")
        support._free_port()
        variant_attack._personalised()
        os._exit(0), at._tree, queue.__name__, queue.claim_in, learner_variant, open_page  # none of these
    """)


def test_a_test_reaching_a_private_name_is_found():
    assert private_reaches(PRIVATE_REACHES, test_modules={"test_classroom_browser", "classroom_support"},
                           scripts={"variant_attack"}) == [
        "5: classroom.data.variants._variant_secret (a project module's private name)",
        "7: tests.test_classroom_browser._sign_in (a test module's private name)",
        "12: classroom.line.queue._candidates (a project module's private name)",
        "13: classroom.data.backup._url (a project module's private name)",
        "14: grader.diagnosis.mutants._build_lock (a project module's private name)",
        "16: grader.warm_server.WarmServer._next_line (a project module's private name)",
        "17: course.app.demo_ui._LOADED (a project module's private name)",
        "18: classroom.line.queue._claim_first (a project module's private name)",
        "19: tests.classroom_support._free_port (a test module's private name)",
        "20: variant_attack._personalised (a project module's private name)",
    ]


def test_a_test_file_reaching_a_private_name_is_named_with_its_line(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "lab_runs.py").write_text("")
    (tmp_path / "tests" / "test_a.py").write_text("def _helper():\n    pass\n")
    (tmp_path / "tests" / "test_b.py").write_text("import lab_runs\nfrom test_a import _helper\nlab_runs._rows()\n")
    (tmp_path / "tests" / "data").mkdir()  # learner files the tests grade: not test modules
    (tmp_path / "tests" / "data" / "ex00.py").write_text("from grader import _x\n")
    assert private_reach_violations(tmp_path) == [
        "tests/test_b.py:2: test_a._helper (a test module's private name)",
        "tests/test_b.py:3: lab_runs._rows (a project module's private name)",
    ]
