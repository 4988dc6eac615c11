"""Exercise notebooks: export, grading saved notebooks, the grading cell, uploads."""

import io
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course.app import grading_client
from course.common.exercise_index import EXERCISES
from course.common.exercise_index import get as get_exercise
from course.common.i18n import LANGS, t
from grader import cli, notebooks
from grader.core import grade

pytestmark = pytest.mark.slow  # executes notebooks

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "notebooks"


def tag_of(ex_id):
    return f"attention-lab:answer:{ex_id}"


def answer_index(nb, ex_id):
    """Position (from 0) of the cell tagged as the exercise's answer."""
    hits = [i for i, c in enumerate(nb.cells) if tag_of(ex_id) in c.metadata.get("tags", [])]
    assert len(hits) == 1, hits
    return hits[0]


def reference_answer(ex_id):
    """What a learner who solved it would have in the answer cell."""
    solution = (ROOT / "solutions" / get_exercise(ex_id).filename).read_text(encoding="utf-8")
    return f"# attention-lab answer: {ex_id}\n{solution}"


def export(folder, lang="en", ex_ids=()):
    """Export through the command line's entry point; returns the folder."""
    assert notebooks.main(["--out", str(folder), "--lang", lang, *ex_ids]) == 0
    return folder


def edit(path, change):
    """Read a notebook, apply change(nb), write it back with nbformat."""
    nb = nbformat.read(path, as_version=4)
    change(nb)
    nbformat.write(nb, path)


def fill_with_reference(path, ex_id):
    def change(nb):
        nb.cells[answer_index(nb, ex_id)].source = reference_answer(ex_id)
    edit(path, change)


def by_id(report):
    return {ex.id: ex for ex in report.exercises}


# ---- export ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_committed_notebooks_are_up_to_date(lang, tmp_path):
    fresh = export(tmp_path / lang, lang)
    expected = sorted(p.name for p in fresh.glob("*.ipynb"))
    assert expected == sorted(f"{ex.module}.ipynb" for ex in EXERCISES)
    assert sorted(p.name for p in (COMMITTED / lang).glob("*.ipynb")) == expected, \
        f"notebooks/{lang}/ differs: run `python -m grader notebooks --lang {lang}`"
    for name in expected:
        assert (COMMITTED / lang / name).read_bytes() == (fresh / name).read_bytes(), (
            f"notebooks/{lang}/{name} is out of date with the stubs or the text catalogs: "
            f"regenerate it with `python -m grader notebooks --lang {lang}` (never edit it by hand)")


@pytest.mark.parametrize("lang", LANGS)
def test_notebook_content_validates_and_comes_from_stub_and_catalog(lang):
    for ex in EXERCISES:
        nb = notebooks.build_notebook(ex.id, lang)
        nbformat.validate(nb)
        assert nb.nbformat == 4 and len({c.id for c in nb.cells}) == len(nb.cells)
        answer = nb.cells[answer_index(nb, ex.id)]
        stub = (ROOT / "exercises" / ex.filename).read_text(encoding="utf-8")
        assert answer.cell_type == "code"
        assert answer.source == f"# attention-lab answer: {ex.id}\n{stub.rstrip()}"
        intro = nb.cells[0].source
        assert t(f"exercises.{ex.id}.title", lang) in intro
        assert t(f"notebooks.{ex.id}.intro", lang).strip() in intro
        assert "http://localhost:8501/" in intro
        grading = nb.cells[-1]
        assert grading.cell_type == "code" and f'grade_in_notebook("{ex.id}", lang="{lang}")' in grading.source


def test_export_twice_is_identical_and_keeps_work_unless_forced(tmp_path, capsys):
    first = export(tmp_path / "a", "zh", ["ex03"])
    assert [p.name for p in first.iterdir()] == ["ex03_scoring.ipynb"]
    second = export(tmp_path / "b", "zh", ["ex03"])
    assert (first / "ex03_scoring.ipynb").read_bytes() == (second / "ex03_scoring.ipynb").read_bytes()
    assert "加性注意力" in (first / "ex03_scoring.ipynb").read_text(encoding="utf-8")
    path = first / "ex03_scoring.ipynb"
    fill_with_reference(path, "ex03")
    worked = path.read_bytes()
    export(first, "zh", ["ex03"])
    assert path.read_bytes() == worked
    assert "kept" in capsys.readouterr().out
    assert notebooks.main(["--out", str(first), "--lang", "zh", "--force", "ex03"]) == 0
    assert path.read_bytes() == (second / "ex03_scoring.ipynb").read_bytes()


def test_export_usage_errors(tmp_path, capsys):
    assert notebooks.main(["ex99", "--out", str(tmp_path)]) == 2
    assert "unknown exercise 'ex99'" in capsys.readouterr().err
    assert notebooks.main(["--lang", "fr", "--out", str(tmp_path)]) == 2
    (tmp_path / "file").write_text("x")
    assert notebooks.main(["--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


# ---- grading saved notebooks ----------------------------------------------------------------


def test_round_trip_reference_passes_and_pristine_is_not_written(tmp_path):
    folder = export(tmp_path / "nb")
    for ex in EXERCISES:
        if ex.id in ("ex01", "ex03", "ex05", "ex07"):
            fill_with_reference(folder / f"{ex.module}.ipynb", ex.id)

    def scratch(nb):  # an untagged cell of the learner's own experiments is ignored
        nb.cells.insert(3, nbformat.v4.new_code_cell("this is not python (\nraise SystemExit(1)"))
    edit(folder / "ex03_scoring.ipynb", scratch)
    results = by_id(grade(folder, None))
    for ex in EXERCISES:
        if ex.id in ("ex01", "ex03", "ex05", "ex07"):
            assert results[ex.id].passed, (ex.id, results[ex.id].summary)
        else:
            assert results[ex.id].status == "not_written", (ex.id, results[ex.id].summary)
            assert results[ex.id].summary.startswith("not started: write ")


def test_other_reference_filled_exercises_pass(tmp_path):
    folder = export(tmp_path / "nb", "zh", ["ex00", "ex02", "ex04", "ex06"])
    for name in ("ex00_paths", "ex02_nadaraya_watson", "ex04_bahdanau", "ex06_positional_encoding"):
        fill_with_reference(folder / f"{name}.ipynb", name[:4])
    results = grade(folder, ["ex00", "ex02", "ex04", "ex06"]).exercises
    assert all(ex.passed for ex in results), [(ex.id, ex.summary) for ex in results]


@pytest.fixture(scope="module")
def malformed(tmp_path_factory):
    """One folder with a broken notebook per case, plus a good one; graded once."""
    folder = export(tmp_path_factory.mktemp("malformed"))
    cells = {}

    def untag(nb):
        nb.cells[answer_index(nb, "ex00")].metadata["tags"] = []
    edit(folder / "ex00_paths.ipynb", untag)

    def duplicate(nb):
        i = answer_index(nb, "ex01")
        nb.cells.insert(i + 2, nbformat.v4.new_code_cell(reference_answer("ex01"), metadata={"tags": [tag_of("ex01")]}))
        cells["ex01"] = (i + 1, i + 3)
    edit(folder / "ex01_softmax.ipynb", duplicate)

    text = (folder / "ex02_nadaraya_watson.ipynb").read_text(encoding="utf-8")
    (folder / "ex02_nadaraya_watson.ipynb").write_text(text.replace('"cells": [', '"cells": [,', 1), encoding="utf-8")
    cells["ex02"] = next(n for n, line in enumerate(text.splitlines(), 1) if '"cells": [' in line)

    data = json.loads((folder / "ex03_scoring.ipynb").read_text(encoding="utf-8"))
    data["nbformat"] = 3
    (folder / "ex03_scoring.ipynb").write_text(json.dumps(data), encoding="utf-8")

    def syntax_error(nb):
        i = answer_index(nb, "ex04")
        source = reference_answer("ex04").rstrip("\n") + "\n\ndef broken(:\n    pass\n"
        nb.cells[i].source = source
        cells["ex04"] = (i + 1, source.splitlines().index("def broken(:") + 1)
    edit(folder / "ex04_bahdanau.ipynb", syntax_error)

    def markdown_tagged(nb):
        i = answer_index(nb, "ex05")
        nb.cells[i] = nbformat.v4.new_markdown_cell(nb.cells[i].source, metadata={"tags": [tag_of("ex05")]})
        cells["ex05"] = i + 1
    edit(folder / "ex05_multihead.ipynb", markdown_tagged)

    fill_with_reference(folder / "ex06_positional_encoding.ipynb", "ex06")
    return folder, cells, by_id(grade(folder, None))


def test_notebook_without_tagged_cell_is_named(malformed):
    folder, _, results = malformed
    ex = results["ex00"]
    assert ex.status == "error" and not ex.passed
    assert f"{folder / 'ex00_paths.ipynb'} (no cell is tagged {tag_of('ex00')}" in ex.summary


def test_two_tagged_cells_for_one_exercise_are_named(malformed):
    folder, cells, results = malformed
    first, second = cells["ex01"]
    assert results["ex01"].status == "error"
    assert f"ex01_softmax.ipynb, cells {first} and {second} (more than one cell is tagged" in results["ex01"].summary


def test_invalid_json_is_named(malformed):
    folder, cells, results = malformed
    summary = results["ex02"].summary
    assert results["ex02"].status == "error"
    assert f"{folder / 'ex02_nadaraya_watson.ipynb'} (not a notebook: invalid JSON" in summary
    assert f"at line {cells['ex02']} column" in summary  # where the stray comma was put


def test_wrong_nbformat_version_is_named(malformed):
    folder, _, results = malformed
    assert results["ex03"].status == "error"
    assert f"{folder / 'ex03_scoring.ipynb'} (nbformat version 3, but the grader reads version 4" in \
        results["ex03"].summary


def test_syntax_error_names_notebook_cell_and_line(malformed):
    folder, cells, results = malformed
    cell, line = cells["ex04"]
    ex = results["ex04"]
    assert ex.status == "error"
    assert f"{folder / 'ex04_bahdanau.ipynb'}, cell {cell} has a syntax error" in ex.summary
    assert f"(ex04_bahdanau.ipynb, cell {cell}, line {line}: `def broken(:`)" in ex.summary


def test_tagged_markdown_cell_is_named(malformed):
    _, cells, results = malformed
    assert f"ex05_multihead.ipynb, cell {cells['ex05']} (tagged {tag_of('ex05')}, but it is a markdown cell" \
        in results["ex05"].summary


def test_other_exercises_are_still_graded(malformed):
    _, _, results = malformed
    assert results["ex06"].passed
    assert results["ex07"].status == "not_written"


def test_schema_invalid_notebook_is_named(tmp_path):
    from grader.notebook_submit import scan_notebook

    path = tmp_path / "ex00_paths.ipynb"
    path.write_text('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}}', encoding="utf-8")
    assert scan_notebook(path) == ({}, [f"{path} (not a valid nbformat 4 notebook: The notebook is invalid and "
                                        "is missing an expected key: cells; save it again from Jupyter, or export "
                                        "a fresh copy with `python -m grader notebooks`)"])


def test_py_file_beside_notebooks_is_used_when_no_cell_is_tagged(tmp_path):
    (tmp_path / "scratch.ipynb").write_text(nbformat.writes(nbformat.v4.new_notebook()), encoding="utf-8")
    (tmp_path / "ex00_paths.py").write_text((ROOT / "solutions" / "ex00_paths.py").read_text(), encoding="utf-8")
    warnings = []
    from grader.notebook_submit import read_notebook_sources
    sources = read_notebook_sources(tmp_path, ["ex00"], warn=warnings.append)
    assert sources["ex00"] == ((ROOT / "solutions" / "ex00_paths.py").read_text(), str(tmp_path / "ex00_paths.py"))
    assert len(warnings) == 1 and "scratch.ipynb (no cell is tagged" in warnings[0]


def test_cli_grades_a_single_notebook(tmp_path):
    folder = export(tmp_path / "nb", "en", ["ex00"])
    fill_with_reference(folder / "ex00_paths.ipynb", "ex00")
    env = {"PATH": "/usr/bin:/bin", "ATTENTION_LAB_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-m", "grader", "--target", str(folder / "ex00_paths.ipynb"), "--json"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert [ex["id"] for ex in report["exercises"]] == ["ex00"]  # only the notebook's own exercise
    assert report["exercises"][0]["passed"]


def test_cli_usage_errors_for_notebook_targets(tmp_path, capsys):
    assert cli.main(["--target", str(tmp_path / "nope.ipynb")]) == 2
    assert "is not a directory or a .ipynb notebook" in capsys.readouterr().err
    export(tmp_path, "en", ["ex00"])
    assert cli.main(["--target", str(tmp_path / "ex00_paths.ipynb"), "--watch"]) == 2
    assert "grade a notebook without --watch" in capsys.readouterr().err


# ---- the grading cell -----------------------------------------------------------------------


def test_last_answer_takes_the_last_run_of_the_marked_cell():
    history = ["", "# attention-lab answer: ex03\nx = 1", "print(2)", "\n# attention-lab answer: ex03\nx = 3",
               "# attention-lab answer: ex01\ny = 1", "# attention-lab answer: ex031\n"]
    assert notebooks.last_answer("ex03", history) == ("\n# attention-lab answer: ex03\nx = 3", 3)
    assert notebooks.last_answer("ex05", history) == (None, None)


def test_grade_in_notebook_prints_the_cli_feedback():
    out = io.StringIO()
    history = ["", "import torch", reference_answer("ex00").rstrip("\n")]
    report = notebooks.grade_in_notebook("ex00", lang="en", history=history, out=out)
    assert report.passed
    assert "1/1 exercise passed." in out.getvalue()
    assert "http://localhost:8501/seq2seq" in out.getvalue()

    out = io.StringIO()
    assert notebooks.grade_in_notebook("ex00", history=["", "print(1)"], out=out) is None
    assert "No answer cell for ex00 has been run yet" in out.getvalue()


def test_grade_in_notebook_names_lines_of_the_answer_cell():
    out = io.StringIO()
    source = "# attention-lab answer: ex00\n\nARCHITECTURES = (\n"  # unclosed: line 3
    report = notebooks.grade_in_notebook("ex00", history=["", "x = 1", source], out=out)
    assert report.exercises[0].status == "error"
    assert "(answer cell (In [2]), line 3" in out.getvalue()


def test_executed_notebook_passes_its_own_grading_cell():
    """Top to bottom with nbclient and an ipykernel python3 kernel, in notebooks/en/ as a learner would."""
    import nbclient

    ex_id = "ex04"  # imports ex03 relatively, which needs the setup cell's package context
    nb = nbformat.read(COMMITTED / "en" / "ex04_bahdanau.ipynb", as_version=4)
    nb.cells[answer_index(nb, ex_id)].source = reference_answer(ex_id)
    client = nbclient.NotebookClient(nb, timeout=240, kernel_name="python3",
                                     resources={"metadata": {"path": str(COMMITTED / "en")}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    grading = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert "ex04" in grading and "passed" in grading and "1/1 exercise passed." in grading, grading
    assert "http://localhost:8501/bahdanau" in grading


# ---- uploads (the exercises page) -----------------------------------------------------------


def test_upload_problems_are_found_before_running_anything():
    assert "neither a .py file nor a .ipynb" in grading_client.upload_problem("ex03", "work.txt", b"x")
    assert "empty" in grading_client.upload_problem("ex03", "work.py", b"")
    assert "unknown exercise" in grading_client.upload_problem("ex99", "work.py", b"x")
    assert "at most 1 MB" in grading_client.upload_problem("ex03", "w.ipynb", b"x" * (2**20 + 1))
    assert grading_client.upload_problem("ex03", "w.ipynb", b"x" * 2**20) is None  # exactly the limit
    assert grading_client.upload_problem("ex03", "My Work.IPYNB", b"{}") is None
    with pytest.raises(grading_client.GraderError, match="neither"):
        grading_client.grade_upload("ex03", "work.txt", b"x")


def test_upload_of_a_py_file_and_of_a_notebook_is_graded(tmp_path):
    source = (ROOT / "solutions" / "ex00_paths.py").read_bytes()
    report = grading_client.grade_upload("ex00", "my try.py", source)
    assert report["exercises"][0]["id"] == "ex00" and report["exercises"][0]["passed"]

    folder = export(tmp_path / "nb", "en", ["ex03"])
    fill_with_reference(folder / "ex03_scoring.ipynb", "ex03")
    seen = []
    report = grading_client.grade_upload("ex05", "my work.ipynb", (folder / "ex03_scoring.ipynb").read_bytes(),
                                         on_progress=lambda *a: seen.append(a))
    entry = report["exercises"][0]
    assert entry["id"] == "ex05" and entry["status"] == "error"
    assert "my work.ipynb (no cell is tagged attention-lab:answer:ex05; it holds answers for ex03 only)" \
        in entry["summary"]
    assert "attention-lab-upload-" not in json.dumps(report)  # the temporary folder is not shown
    assert seen == [(1, 1, "ex05", "error")]


def test_practice_page_grades_an_upload_in_the_child_process_client(monkeypatch):
    """The widget hands the bytes to grading_client.grade_upload (faked here) and shows its report."""
    from app_helpers import errors_of, open_page

    calls = []

    def fake_grade_upload(ex_id, filename, data, on_progress=None, timeout=None, lang=None, server=None):
        calls.append((ex_id, filename, data))
        assert lang == "zh"  # the grader writes its messages in the learner's language
        assert isinstance(server, grading_client.GradingServer)  # the page's long-lived grader, not a fresh one
        return {"version": 1, "target": filename, "passed": False, "exercises": [{
            "id": ex_id, "title": ex_id, "file": filename, "status": "failed", "passed": False, "score": 0.5,
            "duration_s": 1.0, "summary": "summary from the fake",
            "checks": [{"name": "values", "passed": False, "message": "values differ", "hint": None}]}]}

    monkeypatch.setattr(grading_client, "grade_upload", fake_grade_upload)
    at = open_page("app_pages/practice.py", lang="zh")
    assert not errors_of(at)
    assert at.file_uploader(key="practice_upload").allowed_type == [".py", ".ipynb"]
    at.selectbox(key="practice_upload_ex").set_value("ex03").run()
    at.file_uploader(key="practice_upload").set_value(("mine.ipynb", b'{"nbformat": 4}', "application/json")).run()
    at.button(key="practice_upload_grade").click().run()
    assert calls == [("ex03", "mine.ipynb", b'{"nbformat": 4}')]
    assert not errors_of(at)
    assert any("summary from the fake" in m.value for m in at.markdown)

    at.file_uploader(key="practice_upload").set_value(("empty.py", b"", "text/x-python")).run()
    at.button(key="practice_upload_grade").click().run()
    assert len(calls) == 1  # rejected before grading
    assert t("practice.upload_rejected", "zh", error=grading_client.upload_problem("ex03", "empty.py", b"", "zh")) \
        in [e.value for e in at.error]
