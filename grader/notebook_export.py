"""Export each exercise as a Jupyter notebook (nbformat 4), deterministically.

A notebook holds: the introduction (title, summary, shapes and formulas from
course/text/<lang>/, a link to the chapter in the app), how to work, a setup
cell, the answer cell (the whole stub, tagged `attention-lab:answer:<id>`,
first line `# attention-lab answer: <id>`) and a grading cell. Cell ids are
fixed and nothing depends on the time or the output folder, so exporting
twice gives identical files (tests compare the committed notebooks/ with a
fresh export).

Imports in the answer cell: the stub keeps its relative imports
(`from .ex01_softmax import masked_softmax`), because the grader runs the
cell as a module of a package that holds the reference versions of the
earlier exercises. The setup cell gives the notebook's namespace the same
context: it puts the repository on sys.path and sets `__package__ =
"solutions"`, so the relative import finds the same reference code.
"""

from pathlib import Path

import nbformat
from nbformat import v4

from course.common import pages_index
from course.common.exercise_index import EXERCISES
from course.common.exercise_index import get as get_exercise
from course.common.i18n import t
from course.common.paths import PROJECT_ROOT, atomic_write_text

from .notebook_submit import answer_marker, answer_tag, scan_notebook

APP_URL = "http://localhost:8501"  # where `streamlit run app.py` serves the app
SETUP_TAG = "attention-lab:setup"
GRADE_TAG = "attention-lab:grade"

SETUP_SOURCE = '''\
# Setup: find the Attention Lab repository so that the grader (and the reference
# code of earlier exercises) can be imported. If it is somewhere else, set the
# environment variable ATTENTION_LAB_ROOT to its folder before starting Jupyter.
import os
import sys
from pathlib import Path


def _attention_lab_root():
    """$ATTENTION_LAB_ROOT, the current folder or one above it, or a clone inside it."""
    here = Path.cwd().resolve()
    candidates = [os.environ.get("ATTENTION_LAB_ROOT"), here, *here.parents, *sorted(here.glob("*"))]
    for candidate in candidates:
        if candidate and (Path(candidate) / "grader" / "notebooks.py").is_file():
            return Path(candidate).resolve()
    raise FileNotFoundError(
        f"cannot find the Attention Lab repository from {here}: open this notebook inside the "
        "repository, clone the repository into this folder, or set ATTENTION_LAB_ROOT"
    )


ATTENTION_LAB_ROOT = _attention_lab_root()
if str(ATTENTION_LAB_ROOT) not in sys.path:
    sys.path.insert(0, str(ATTENTION_LAB_ROOT))
# The answer cell imports earlier exercises relatively (`from .ex01_softmax import ...`).
# As in the grader, they resolve to the course's reference code:
__package__ = "solutions"
print("Attention Lab repository:", ATTENTION_LAB_ROOT)'''

GRADE_SOURCE = '''\
from grader.notebooks import grade_in_notebook

result = grade_in_notebook("{ex_id}", lang="{lang}")'''


def notebook_name(ex_id):
    """The notebook's file name: the exercise module's, with .ipynb."""
    return f"{get_exercise(ex_id).module}.ipynb"


def chapter_link(ex_id, lang):
    """A line linking to the exercise's chapter page in the app (or the exercises page)."""
    page = pages_index.BY_KEY.get(get_exercise(ex_id).chapter)
    if page is not None and page.file.is_file():
        return t("notebooks.chapter_link", lang, chapter=t(page.heading_key, lang), url=f"{APP_URL}/{page.url_path}")
    practice = pages_index.get("practice")
    return t("notebooks.practice_link", lang, url=f"{APP_URL}/{practice.url_path}?ex={ex_id}")


def answer_source(ex_id):
    """The answer cell: the marker line, then the exercise stub as it is in exercises/."""
    stub = (PROJECT_ROOT / "exercises" / get_exercise(ex_id).filename).read_text(encoding="utf-8")
    return f"{answer_marker(ex_id)}\n{stub.rstrip()}"


def _cell(make, ex_id, name, source, tags=()):
    """A cell with a fixed id (`ex03-answer`) and optional tags."""
    cell = make(source, id=f"{ex_id}-{name}")
    if tags:
        cell.metadata["tags"] = list(tags)
    return cell


def build_notebook(ex_id, lang="en"):
    """The notebook of one exercise, in one language."""
    exercise = get_exercise(ex_id)
    title = t(f"exercises.{ex_id}.title", lang)
    intro = "\n\n".join([
        f"# {ex_id} · {title}",
        f"*{t(f'exercises.{ex_id}.summary', lang)}*",
        t(f"notebooks.{ex_id}.intro", lang).strip(),
        chapter_link(ex_id, lang),
    ])
    how_to = t("notebooks.how_to", lang, filename=exercise.filename, marker=answer_marker(ex_id),
               tag=answer_tag(ex_id), ex_id=ex_id).strip()
    md, code = v4.new_markdown_cell, v4.new_code_cell
    notebook = v4.new_notebook(
        cells=[
            _cell(md, ex_id, "intro", intro),
            _cell(md, ex_id, "how-to", how_to),
            _cell(md, ex_id, "setup-heading", t("notebooks.setup_heading", lang).strip()),
            _cell(code, ex_id, "setup", SETUP_SOURCE, [SETUP_TAG]),
            _cell(md, ex_id, "answer-heading", t("notebooks.answer_heading", lang).strip()),
            _cell(code, ex_id, "answer", answer_source(ex_id), [answer_tag(ex_id)]),
            _cell(md, ex_id, "grade-heading", t("notebooks.grade_heading", lang).strip()),
            _cell(code, ex_id, "grade", GRADE_SOURCE.format(ex_id=ex_id, lang=lang), [GRADE_TAG]),
        ],
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "attention_lab": {"exercise": ex_id, "lang": lang},
        },
    )
    nbformat.validate(notebook)
    return notebook


def notebook_text(notebook):
    """The file contents of a notebook (nbformat's own JSON layout, newline-terminated)."""
    return nbformat.writes(notebook) + "\n"


def _holds_work(path, ex_id, fresh_source):
    """Does an existing notebook's answer cell differ from the stub (the learner's work)?"""
    found, _ = scan_notebook(path)
    return any(source != fresh_source for _, source, _ in found.get(ex_id, []))


def export_notebooks(out_dir, lang="en", ex_ids=None, force=False, report=print):
    """Write one notebook per exercise into out_dir; returns the paths written.

    A notebook already there whose answer cell holds the learner's work is
    kept (with a message) unless `force`.
    """
    out_dir = Path(out_dir)
    written = []
    for ex_id in ex_ids or [ex.id for ex in EXERCISES]:
        path = out_dir / notebook_name(ex_id)
        if path.exists() and not force and _holds_work(path, ex_id, answer_source(ex_id)):
            report(f"kept {path}: its answer cell holds your work (pass --force to overwrite it)")
            continue
        atomic_write_text(path, notebook_text(build_notebook(ex_id, lang)))
        written.append(path)
        report(f"wrote {path}")
    return written
