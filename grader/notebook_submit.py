"""Notebooks as submissions: find the learner's answer cells and grade them.

Two readers of the same answer cell:
- the command line (`python -m grader --target DIR|FILE.ipynb`) reads saved
  notebooks with nbformat and takes the code cell tagged
  `attention-lab:answer:<id>` (cell metadata tags) as the exercise's module;
- the grading cell inside a running notebook (`grade_in_notebook`) takes the
  last executed cell whose first line is the answer marker
  (`# attention-lab answer: <id>`) from the kernel's input history.

Either way the cell's code is graded exactly like a `.py` exercise, in the
sandbox, so line numbers in messages are lines of the cell.
"""

import json
import sys
from pathlib import Path

from course.common.exercise_index import BY_ID, EXERCISES
from course.common.exercise_index import get as get_exercise

from .text import tr

TAG_PREFIX = "attention-lab:answer:"  # + exercise id: the cell the grader reads
MARKER_PREFIX = "# attention-lab answer: "  # + exercise id: first line of that cell
NBFORMAT_MAJOR = 4
MAX_NOTEBOOK_MB = 64  # a notebook larger than this is not read
MAX_DEPTH = 64  # JSON nesting levels (a notebook's own are fewer than ten; outputs add a few)


def answer_tag(ex_id):
    """The cell tag that marks the answer cell of an exercise."""
    return f"{TAG_PREFIX}{ex_id}"


def answer_marker(ex_id):
    """The first line of an answer cell, which the grading cell looks for."""
    return f"{MARKER_PREFIX}{ex_id}"


def is_notebook_file(target):
    """Is target a single .ipynb file?"""
    path = Path(target)
    return path.suffix == ".ipynb" and path.is_file()


def notebook_paths(target):
    """The notebooks of a target: the file itself, or the .ipynb files of a directory."""
    path = Path(target)
    if is_notebook_file(path):
        return [path]
    if path.is_dir():
        return sorted(p for p in path.glob("*.ipynb") if p.is_file())
    return []


def is_notebook_target(target):
    """Should this target be read as notebooks (a .ipynb, or a directory holding some)?"""
    return bool(notebook_paths(target))


def _cells_of(path, lang="en"):
    """(cells, None) from a saved notebook, or (None, "PATH (what is wrong and how to fix it)")."""
    import nbformat

    fresh = tr("notebook.fresh", lang)
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_MB * 2**20:
            return None, tr("notebook.too_big", lang, path=path, size=f"{size / 2**20:.0f}", limit=MAX_NOTEBOOK_MB,
                            fresh=fresh)
        text = path.read_bytes().decode("utf-8")
        data = json.loads(text)
    except RecursionError:  # nesting deeper than the JSON parser goes
        return None, tr("notebook.too_deep", lang, path=path, limit=MAX_DEPTH, fresh=fresh)
    except UnicodeDecodeError as err:
        return None, tr("notebook.not_utf8", lang, path=path, reason=err.reason, start=err.start)
    except OSError as err:
        return None, tr("notebook.cannot_open", lang, path=path, error=err.strerror)
    except json.JSONDecodeError as err:
        return None, tr("notebook.bad_json", lang, path=path, error=err.msg, line=err.lineno, column=err.colno,
                        fresh=fresh)
    if _depth_over(data, MAX_DEPTH):
        return None, tr("notebook.too_deep", lang, path=path, limit=MAX_DEPTH, fresh=fresh)
    version = data.get("nbformat") if isinstance(data, dict) else None
    if version != NBFORMAT_MAJOR:
        return None, tr("notebook.bad_version", lang, path=path, version=repr(version), major=NBFORMAT_MAJOR,
                        fresh=fresh)
    try:
        notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except Exception as err:  # nbformat's schema check: missing or malformed parts
        reason = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        return None, tr("notebook.invalid", lang, path=path, reason=reason, fresh=fresh)
    if not isinstance(notebook.get("cells"), list):
        return None, tr("notebook.no_cells", lang, path=path, fresh=fresh)
    return notebook["cells"], None


def _depth_over(data, limit):
    """Does parsed JSON nest deeper than limit (walked without recursion)?"""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return False


def _source(cell):
    """A cell's source as one string (saved notebooks may split it into lines)."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def scan_notebook(path, lang="en"):
    """What one notebook holds -> ({ex_id: [(cell number, source, cell type)]}, [problems]).

    Cells are numbered from 1 in notebook order, counting every cell.
    """
    path = Path(path)
    cells, problem = _cells_of(path, lang)
    if problem:
        return {}, [problem]
    found, problems = {}, []
    for number, cell in enumerate(cells, 1):
        tags = (cell.get("metadata") or {}).get("tags") or []
        for tag in tags if isinstance(tags, list) else []:
            if not isinstance(tag, str) or not tag.startswith(TAG_PREFIX):
                continue
            ex_id = tag[len(TAG_PREFIX):]
            if ex_id not in BY_ID:
                problems.append(tr("notebook.unknown_tag", lang, path=path, number=number, tag=repr(tag),
                                   ex_id=repr(ex_id), ids=", ".join(BY_ID)))
                continue
            found.setdefault(ex_id, []).append((number, _source(cell), cell.get("cell_type")))
    if not found and not problems:
        tag = answer_tag(_named_exercise(path) or "<exercise>")
        problems.append(tr("notebook.no_tag", lang, path=path, tag=tag))
    return found, problems


def _named_exercise(path):
    """The exercise a notebook's file name points at ('ex03_scoring.ipynb' -> 'ex03'), or None."""
    stem = Path(path).name
    return next((ex.id for ex in EXERCISES if stem.startswith((ex.id + "_", ex.id + "."))), None)


def _one_source(ex_id, hits, lang="en"):
    """(source, name, label) for an exercise's tagged cells, or (None, message) when unusable."""
    if len(hits) > 1:
        by_path = {}
        for path, number, _, _ in hits:
            by_path.setdefault(path, []).append(str(number))
        joiner = tr("notebook.and", lang)
        where = joiner.join(tr("notebook.cells" if len(numbers) > 1 else "notebook.cell_one", lang, path=path,
                               numbers=joiner.join(numbers))
                            for path, numbers in by_path.items())
        return None, tr("notebook.many_tagged", lang, where=where, tag=answer_tag(ex_id))
    path, number, source, cell_type = hits[0]
    if cell_type != "code":
        return None, tr("notebook.not_code", lang, path=path, number=number, tag=answer_tag(ex_id),
                        cell_type=cell_type)
    return (source, tr("notebook.cell_one", lang, path=path, numbers=number),
            tr("notebook.cell_one", lang, path=path.name, numbers=number))


def read_notebook_sources(target, ex_ids, warn=None, lang="en"):
    """{ex_id: (source, name, label) or (None, message)} from a notebook or a directory of them.

    An exercise without a tagged cell is read from its `.py` file when the
    directory has one; otherwise its message names the notebook problems that
    may explain it. Problems that no exercise reports go to `warn` (stderr).
    """
    warn = warn or (lambda text: print(tr("notebook.note", lang, text=text), file=sys.stderr, flush=True))
    hits, problems = {}, []  # ex_id -> [(path, cell number, source, type)]; [(path, message)]
    for path in notebook_paths(target):
        found, notebook_problems = scan_notebook(path, lang)
        problems += [(path, message) for message in notebook_problems]
        for ex_id, cells in found.items():
            hits.setdefault(ex_id, []).extend((path, *cell) for cell in cells)
    sources, reported = {}, set()
    for ex_id in ex_ids:
        if hits.get(ex_id):
            sources[ex_id] = _one_source(ex_id, hits[ex_id], lang)
            continue
        py_file = Path(target) / get_exercise(ex_id).filename
        if Path(target).is_dir() and py_file.is_file():
            sources[ex_id] = _read_py(py_file, lang)
            continue
        own = [m for p, m in problems if _named_exercise(p) == ex_id] if Path(target).is_dir() else \
            [m for _, m in problems]
        reported.update(own)
        held = tr("notebook.holds", lang, ids=", ".join(sorted(hits))) if hits else ""
        beside = "" if is_notebook_file(target) else tr("notebook.no_py", lang, filename=get_exercise(ex_id).filename)
        sources[ex_id] = (None, "; ".join(own) or tr("notebook.untagged", lang, target=target,
                                                      tag=answer_tag(ex_id), beside=beside, held=held))
    for _, message in problems:
        if message not in reported:
            warn(message)
    return sources


def _read_py(path, lang="en"):
    """(source, name) of a .py exercise beside the notebooks, as grader.core.read_sources reads it."""
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except UnicodeDecodeError as err:
        return None, tr("file.not_utf8", lang, path=path, reason=err.reason, start=err.start)


def default_exercises(target):
    """What `python -m grader --target T` grades without exercise ids: all, or a notebook's own."""
    if is_notebook_file(target):
        found, _ = scan_notebook(target)
        named = _named_exercise(target)
        ids = sorted(found) or ([named] if named else [])
        if ids:
            return ids
    return [ex.id for ex in EXERCISES]
