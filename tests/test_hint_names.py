"""Every place a hint names is the learner's own: their line number and their names, never the reference's.

An automatic hint (grader/diagnosis/explain.py) finds its slip in a mutant of the reference; the line it
names is found in the learner's file (grader/diagnosis/learner_lines.py), and without a line of theirs that
is surely the one, it names none. An error names the learner's own line that raised, read from the
sandbox's traceback under bounds (grader/messages.py own_line), quoted from the learner's file.

The learner files are tests/hint_names/*.py, written with other names than the reference and lines in
another order; every line number below is counted by hand in those files.
"""

from pathlib import Path

import pytest

from grader.core import Submission, grade_submissions
from grader.diagnosis import explain, learner_lines
from grader.text import render
from grader.diagnosis.learner_lines import Site
from grader.messages import error_message, own_line

FILES = Path(__file__).resolve().parent / "hint_names"
EX03 = "ex03_scoring.py"


def first_failing(result):
    return next(c for c in result.checks if not c.passed)


def hint_of(result):
    return next(c.hint for c in result.checks if c.hint)


@pytest.fixture(scope="module")
def graded():
    names = ["ex03_dot_renamed", "ex03_additive_renamed", "ex03_dot_two_steps", "ex03_raises", "ex03_forged_frame"]
    results = grade_submissions([Submission("ex03", (FILES / f"{n}.py").read_text(encoding="utf-8"), f"{n}.py")
                                 for n in names])
    return dict(zip(names, results))


@pytest.fixture(scope="module")
def graded_zh():
    names = ["ex03_dot_renamed", "ex03_raises"]
    sources = [(FILES / f"{n}.py").read_text(encoding="utf-8") for n in names]
    results = grade_submissions([Submission("ex03", source, f"{n}.py") for n, source in zip(names, sources)]
                                + [Submission("ex03", sources[1], "ex03_scoring.ipynb", label=CELL)], lang="zh")
    return dict(zip(names + ["cell"], results))


CELL = "ex03_scoring.ipynb, cell 7"  # how a notebook's answer cell is named (grader/notebook_submit.py)


@pytest.mark.slow
def test_a_hint_names_the_learners_own_variable_and_line(graded):
    hint = hint_of(graded["ex03_dot_renamed"])  # `attn_logits` on line 43; the reference's `scores` nowhere
    assert hint == ("Your results match one specific slip in DotProductAttention.forward, in your line 43 (the one "
                    "that computes `attn_logits`): the square-root scale is doubled. Fix that line; the checks will "
                    "tell you if anything else is wrong."), hint
    assert "scores" not in hint


@pytest.mark.slow
def test_a_reordered_body_gets_the_line_that_plays_the_part(graded):
    # W_k before W_q, the reference's `features` is `hidden`, assigned on lines 25 and 26: the slip is on 26
    hint = hint_of(graded["ex03_additive_renamed"])
    assert "in AdditiveAttention.forward, in your line 26 (the one that computes `hidden`): it multiplies where it " \
           "must divide" in hint, hint
    assert "features" not in hint


@pytest.mark.slow
def test_without_a_line_that_is_surely_the_one_no_variable_is_named(graded):
    # the scores in two steps (lines 42 and 43) where the reference has one: which one is the slip's is not sure
    hint = hint_of(graded["ex03_dot_two_steps"])
    assert hint == ("Your results match one specific slip in one line of the code that DotProductAttention.forward "
                    "runs: the square-root scale is doubled. Fix that line; the checks will tell you if anything "
                    "else is wrong."), hint


@pytest.mark.slow
def test_an_error_names_the_learners_own_line_that_raised(graded):
    message = first_failing(graded["ex03_raises"]).message
    assert message.startswith("your line 45 (`mixed = torch.bmm(self.dropout(probs), values.transpose(1, 2))`) "
                              "raised RuntimeError: "), message


@pytest.mark.slow
def test_a_notebook_cells_line_says_the_cell():
    source = (FILES / "ex03_raises.py").read_text(encoding="utf-8")
    [result] = grade_submissions([Submission("ex03", source, "ex03_scoring.ipynb", label=CELL)])
    message = first_failing(result).message
    assert message.startswith("your line 45 of ex03_scoring.ipynb, cell 7 (`mixed = torch.bmm(self.dropout(probs), "
                              "values.transpose(1, 2))`) raised RuntimeError: "), message


@pytest.mark.slow
def test_the_learners_line_and_name_in_chinese(graded_zh):
    hint = hint_of(graded_zh["ex03_dot_renamed"])
    assert "DotProductAttention.forward 中你的第 43 行（计算 `attn_logits` 的那一行）" in hint, hint
    message = first_failing(graded_zh["ex03_raises"]).message
    assert message.startswith("你的第 45 行（`mixed = torch.bmm(self.dropout(probs), values.transpose(1, 2))`）"
                              "抛出了 RuntimeError："), message
    message = first_failing(graded_zh["cell"]).message
    assert message.startswith("ex03_scoring.ipynb, cell 7 中你的第 45 行（`mixed = torch.bmm(self.dropout(probs), "
                              "values.transpose(1, 2))`）抛出了 RuntimeError："), message


@pytest.mark.slow
def test_a_frame_forged_under_the_learners_file_name_is_not_believed(graded):
    # line 42 compiles code under the file's own name whose frame claims line 100001: the file has 43 lines
    message = first_failing(graded["ex03_forged_frame"]).message
    assert message == ('your line 42 (`exec(compile(code, __file__, "exec"))  # a frame that claims a line this file '
                       'does not have`) raised ValueError: forged frame'), message


LEARNER = '''def f(a, b):
    return a


def attend(q, k, v):
    logits = q @ k.T
    width = q.shape[-1]
    logits = logits / width ** 0.5
    probs = logits.softmax(-1)
    return probs @ v
'''
LOCATED = '/run/job0/learner/ex03_scoring.py'


def frame(path, line, code="x"):
    return f'  File "{path}", line {line}, in forward\n    {code}\n'


def test_the_last_frame_in_the_learners_file_is_named_with_its_own_text():
    traceback = frame(LOCATED, 6, "text the sandbox sent") + frame('/run/job0/learner/ex01_softmax.py', 2)
    assert own_line({"traceback": traceback}, LEARNER, EX03) == (6, "logits = q @ k.T")
    assert own_line({"traceback": frame(LOCATED, 2) + frame(LOCATED, 8)}, LEARNER, EX03) == \
        (8, "logits = logits / width ** 0.5")


@pytest.mark.parametrize("forged", [
    frame("/etc/passwd", 2),  # another file
    frame("/run/job0/other/ex03_scoring.py", 2),  # the file's name, outside the staged package
    frame("/run/job0/learner/ex03_scoring.py.py", 2),
    frame("/run/job0/learner/ex01_softmax.py", 2),  # a file the learner did not submit
    frame(LOCATED, 0),
    frame(LOCATED, 11),  # past the file's last line (10)
    frame(LOCATED, 99999999),  # more digits than any file has lines
    frame(LOCATED, -3),
    'File "/run/job0/learner/ex03_scoring.py", line 2, in forward\n',  # not a frame's line
    frame('/run/job0/learner/"ex03_scoring.py', 2),  # a quote inside the path
])
def test_a_forged_frame_names_no_line(forged):
    assert own_line({"traceback": forged}, LEARNER, EX03) is None


def test_a_huge_traceback_is_read_from_its_end_only():
    junk = "x" * 5_000_000 + "\n"
    assert own_line({"traceback": frame(LOCATED, 6) + junk}, LEARNER, EX03) is None  # beyond what is read
    assert own_line({"traceback": junk + frame(LOCATED, 6)}, LEARNER, EX03) == (6, "logits = q @ k.T")
    huge_path = "/" + "a" * 100_000 + "/learner/ex03_scoring.py"
    assert own_line({"traceback": frame(huge_path, 6)}, LEARNER, EX03) is None


def test_a_long_or_dirty_line_is_quoted_cleaned_and_capped():
    source = "y = " + "1 + " * 2000 + "1\nz = 1  # \x1b[31mred\u202e\n"
    code = own_line({"traceback": frame(LOCATED, 1)}, source, EX03)[1]
    assert code.startswith("y = 1 + 1 + ") and code.endswith("...") and len(code) <= 123, code
    assert own_line({"traceback": frame(LOCATED, 2)}, source, EX03) == (2, "z = 1  # red")


@pytest.mark.parametrize("error", [{}, {"traceback": None}, {"traceback": ["x"]}, "not a record"])
def test_no_traceback_names_no_line(error):
    assert own_line(error, LEARNER, EX03) is None


def test_an_error_with_its_own_line_is_worded_in_both_languages():
    error = {"kind": "exception", "type": "ZeroDivisionError", "message": "division by zero", "where": None}
    assert error_message(error, own=(3, "c = a / 0")) == "your line 3 (`c = a / 0`) raised ZeroDivisionError: " \
        "division by zero"
    assert error_message(error, lang="zh", own=(3, "c = a / 0")) == \
        "你的第 3 行（`c = a / 0`）抛出了 ZeroDivisionError：division by zero"
    assert error_message(error, own=(3, "")) == "your line 3 raised ZeroDivisionError: division by zero"
    assert error_message(error, own=(3, "c = a / 0", CELL)) == \
        "your line 3 of ex03_scoring.ipynb, cell 7 (`c = a / 0`) raised ZeroDivisionError: division by zero"
    memory = {"kind": "memory", "type": "MemoryError", "message": "", "where": None}
    assert error_message(memory, 512, own=(3, "c = a / 0")) == \
        "ran out of memory (your line 3: `c = a / 0`): the sandbox allows 512 MB"


REFERENCE = '''def attend(queries, keys, values, valid=None):
    d = queries.shape[-1]
    scores = queries @ keys.T
    scores = scores / d ** 0.5
    if valid is not None:
        scores = scores.masked_fill(valid, 0)
    weights = scores.softmax(-1)
    return weights @ values
'''
MUTANT = REFERENCE.replace("scores / d ** 0.5", "scores / d")
THEIRS = '''import torch


def attend(q, k, v, valid=None):
    logits = q @ k.T
    width = q.shape[-1]
    logits = logits / width ** 0.5
    if valid is not None:
        logits = logits.masked_fill(valid, 0)
    probs = logits.softmax(-1)
    return probs @ v
'''


def test_the_learners_line_plays_the_mutated_lines_part():
    # the reference's second `scores` (line 4) is the learner's second `logits`, on their line 7
    assert learner_lines.site(THEIRS, MUTANT, "attend", "scores", REFERENCE) == Site(7, "logits")
    returned = REFERENCE.replace("return weights @ values", "return (weights @ values) * 2")
    assert learner_lines.site(THEIRS, returned, "attend", "", REFERENCE) == Site(11)
    tested = REFERENCE.replace("if valid is not None", "if valid is None")
    assert learner_lines.site(THEIRS, tested, "attend", "?condition", REFERENCE, "valid is not None") == \
        Site(8, "valid is not None")


def test_a_variable_of_the_same_name_set_as_many_times_is_the_learners_line():
    reference = "def grow(n, dilated):\n    dilations = []\n    while n > 0:\n        dilations.append(2 ** len(dilations))\n" \
        "        n -= 1\n    return dilations\n"
    mutant = reference.replace("2 ** len(dilations)", "2 ** (len(dilations) + 1)")
    theirs = "def grow(n, dilated):\n    layers = 0\n    dilations = []\n    while n > layers:\n" \
        "        layers += 1\n        dilations.append(2 ** layers if dilated else 1)\n    return dilations\n"
    # what it is computed from differs (their dilated, their layers): the name and its turn decide, line 6
    assert learner_lines.site(theirs, mutant, "grow", "dilations", reference) == Site(6, "dilations")


def test_no_line_is_named_when_the_learner_computes_it_in_other_steps():
    one_step = THEIRS.replace("    logits = q @ k.T\n", "").replace("logits / width", "q @ k.T / width")
    assert learner_lines.site(one_step, MUTANT, "attend", "scores", REFERENCE) is None
    assert learner_lines.site(THEIRS.replace("def attend", "def other"), MUTANT, "attend", "scores", REFERENCE) is None
    assert learner_lines.site("def attend(:\n", MUTANT, "attend", "scores", REFERENCE) is None
    assert learner_lines.site(THEIRS + "#" * 300_000, MUTANT, "attend", "scores", REFERENCE) is None
    long_body = THEIRS.replace("    return probs @ v\n", "    x = 0\n" * 500 + "    return probs @ v\n")
    assert learner_lines.site(long_body, MUTANT, "attend", "scores", REFERENCE) is None


def test_a_line_that_only_passes_the_value_on_is_not_named():
    returned = REFERENCE.replace("return weights @ values", "return (weights @ values) * 2")
    passed_on = THEIRS.replace("    return probs @ v\n", "    out = probs @ v\n    return out\n")
    assert learner_lines.site(passed_on, returned, "attend", "", REFERENCE) is None


def test_a_long_name_gives_the_line_alone():
    long = THEIRS.replace("logits", "the_logits_of_every_query_against_every_key_here")
    assert learner_lines.site(long, MUTANT, "attend", "scores", REFERENCE) == Site(7)


def test_a_name_in_a_slips_wording_is_the_learners_own_or_none():
    assert learner_lines.renamed(THEIRS, MUTANT, "attend", "d", REFERENCE) == "width"  # the line that plays its part
    assert learner_lines.renamed(THEIRS, MUTANT, "attend", "queries.shape[-1]", REFERENCE) == "q.shape[-1]"
    assert learner_lines.renamed(THEIRS, MUTANT, "attend", "valid", REFERENCE) == "valid"
    assert learner_lines.renamed(THEIRS, MUTANT, "attend", "math", REFERENCE) is None  # never written by them
    module = "class M:\n    def __init__(self):\n        self.W_v = 1\n\n    def forward(self, x):\n        return x\n"
    assert learner_lines.renamed(module, module, "M.forward", "W_v") == "W_v"  # their module's attribute
    assert learner_lines.renamed(module, module, "M.forward", "W_o") is None
    one_step = THEIRS.replace("    logits = q @ k.T\n", "").replace("logits / width", "q @ k.T / width")
    assert learner_lines.renamed(one_step, MUTANT, "attend", "scores", REFERENCE) is None


def test_a_file_that_does_not_parse_gets_a_place_without_its_names():
    entry = {"function": "attend", "target": "scores", "source": MUTANT, "op": "sqrt_dropped", "fields": {}}
    for broken in ("def attend(:\n", "x = " + "(" * 1000 + ")" * 1000 + "\n", None):
        learner = explain.Learner(broken, "ex03", "DotProductAttention.forward")
        assert render(explain.slip_place(entry, learner), "en") == \
            "in one line of the code that DotProductAttention.forward runs"
    assert "`scores`" in render(explain.slip_place(entry, None), "en")  # the reference's wording: mistake labels only
    assert "scores" not in render(explain.slip_place(entry, explain.Learner(THEIRS, "ex03", "attend")), "en")
