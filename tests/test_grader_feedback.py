"""Feedback a learner can act on: hints only where the mistake lives and once, one line for
an unstarted exercise or a broken file, clean output, the softmax rule judged outside the
learner's process, and every message in English and Chinese."""

import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.app import grading_client
from course.common.exercise_index import EXERCISES
from course.common.i18n import LANGS, catalog
from grader import checks as checks_registry
from grader import notebooks
from grader.core import Submission, grade_submissions
from grader.mistakes import apply_mistake
from grader.text import default_lang, hint_text, render

pytestmark = pytest.mark.slow  # grades sample submissions and runs the grader CLI

ROOT = Path(__file__).resolve().parent.parent


def solution(name):
    return (ROOT / "solutions" / name).read_text(encoding="utf-8")


def stub(name):
    return (ROOT / "exercises" / name).read_text(encoding="utf-8")


EX00, EX01, EX03 = solution("ex00_paths.py"), solution("ex01_softmax.py"), solution("ex03_scoring.py")
MISTAKE = {(ex.id, m.id): m for ex in EXERCISES for m in checks_registry.for_exercise(ex.id).MISTAKES}

CASES = {
    # max_path_length counts receptive fields with its own (wrong) formula; receptive_field is right
    "wrong max_path_length only": ("ex00", EX00.replace(
        "while receptive_field(kernel_size, len(dilations), dilations) < n:",
        "while 1 + kernel_size * sum(dilations) < n:")),
    "syntax error": ("ex03", EX03.replace("d = queries.shape[-1]", "d = queries.shape[-1", 1)),
    "control characters": ("ex01", EX01.replace(
        "import torch\n", "import torch\nprint('\\x1b[2J\\x1b[Hcleared\\rhidden\\x07 \\u202eevil')\n", 1).replace(
        'if valid_lens is None:\n        return softmax(X, dim=-1, temperature=temperature)',
        'if valid_lens is None:\n        raise ValueError("\\x1b[31mred\\x1b[0m text")')),
    "softmax via getattr": ("ex01", EX01.replace(
        "    X_max = X.detach().amax(dim=dim, keepdim=True)\n",
        "    return getattr(torch.ops.aten, '_soft' + 'max')(X, dim, False)\n"
        "    X_max = X.detach().amax(dim=dim, keepdim=True)\n")),
    "softmax via F": ("ex01", EX01.replace("import torch\n", "import torch\nimport torch.nn.functional as F\n").replace(
        "    X_max = X.detach().amax(dim=dim, keepdim=True)\n",
        "    return F.softmax(X, dim=dim)\n    X_max = X.detach().amax(dim=dim, keepdim=True)\n")),
    "half written": ("ex03", EX03[: EX03.index("class DotProductAttention")] + stub("ex03_scoring.py")[
        stub("ex03_scoring.py").index("class DotProductAttention"):]),
    "in place": ("ex01", apply_mistake(EX01, MISTAKE["ex01", "input_modified_in_place"])),
    "dropout mistake zh": ("ex03", apply_mistake(EX03, MISTAKE["ex03", "no_dropout"])),
}


@pytest.fixture(scope="module")
def graded():
    names = [n for n in CASES if not n.endswith(" zh")]
    results = grade_submissions([Submission(CASES[n][0], CASES[n][1], f"{CASES[n][0]}_case.py") for n in names])
    zh = [n for n in CASES if n.endswith(" zh")]
    results += grade_submissions([Submission(CASES[n][0], CASES[n][1], f"{CASES[n][0]}_case.py") for n in zh],
                                 lang="zh")
    return dict(zip(names + zh, results))


def failing(result):
    return [c for c in result.checks if not c.passed]


def test_a_hint_only_where_its_mistake_lives(graded):
    result = graded["wrong max_path_length only"]
    assert result.status == "failed"
    assert all(c.passed for c in result.checks if c.id.startswith("ex00.receptive_field"))
    rf_hints = {hint_text("ex00", MISTAKE["ex00", m]) for m in ("rf_no_plus_one", "rf_times_k")}
    assert not rf_hints & {c.hint for c in result.checks}, [c.hint for c in result.checks if c.hint]
    assert not any(c.mistake in ("rf_no_plus_one", "rf_times_k") for c in result.checks)


def test_a_syntax_error_is_one_file_level_message(graded):
    result = graded["syntax error"]
    assert result.status == "error" and len(result.checks) == 1
    [check] = result.checks
    assert check.id == "ex03.file" and check.name == "the file"
    line = EX03[: EX03.index("d = queries.shape[-1]")].count("\n") + 1
    assert re.search(rf"ex03_case\.py has a syntax error: .*\(ex03_case\.py, line {line}: `d = queries\.shape\[-1`\)",
                     check.message), check.message
    assert result.summary == check.message


def test_learner_output_and_messages_lose_control_characters(graded):
    result = graded["control characters"]
    assert "cleared" in result.output and "hidden" in result.output and "evil" in result.output
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e]", result.output), repr(result.output)
    messages = " ".join(c.message for c in failing(result))
    assert "red text" in messages and "\x1b" not in messages


def test_softmax_rule_is_judged_outside_the_learner_process(graded):
    sneaky = graded["softmax via getattr"]  # no name in the source: caught by the recorded operators
    assert sneaky.status == "failed"
    assert any("torch's own softmax ran inside your code (_softmax" in c.message for c in failing(sneaky))
    assert hint_text("ex01", MISTAKE["ex01", "builtin_softmax"]) in [c.hint for c in sneaky.checks]
    named = graded["softmax via F"]  # named in the source: caught by reading it in the grader
    first = failing(named)[0]
    assert first.id == "ex01.rule.builtin_softmax" and "(softmax, line" in first.message
    assert first.hint == hint_text("ex01", MISTAKE["ex01", "builtin_softmax"])
    assert [c.hint for c in named.checks if c.hint] == [first.hint]  # once


def test_half_written_exercise_names_what_is_left_once(graded):
    result = graded["half written"]
    assert result.status == "not_written"
    assert result.summary == "not started: write DotProductAttention.forward in ex03_case.py"
    stubs = [c for c in result.checks if c.kind == "not_implemented"]
    assert len(stubs) == 1 and stubs[0].message == result.summary
    assert all(c.passed for c in result.checks if c.id.startswith("ex03.AdditiveAttention"))


def test_in_place_error_is_translated_into_advice(graded):
    first = failing(graded["in place"])[0]
    assert "modified an input tensor in place" in first.message and "build a new tensor" in first.message
    assert first.hint == hint_text("ex01", MISTAKE["ex01", "input_modified_in_place"])


def test_report_in_chinese_keeps_stable_ids(graded):
    result = graded["dropout mistake zh"]
    assert result.title == catalog("zh")["exercises.ex03.title"]
    first = failing(result)[0]
    assert first.id == "ex03.AdditiveAttention.5" and first.mistake == "no_dropout"
    assert first.hint == hint_text("ex03", MISTAKE["ex03", "no_dropout"], "zh")
    assert "训练模式" in first.name and re.search(r"[\u4e00-\u9fff]", first.message)


# ---- every message in both languages --------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_every_mistake_has_a_hint_and_every_check_text_renders(lang):
    for ex in EXERCISES:
        module = checks_registry.for_exercise(ex.id)
        for mistake in module.MISTAKES:
            assert hint_text(ex.id, mistake, lang).strip()
        for check in module.build():
            assert render(check.name, lang) and render(check.call, lang) is not None


def test_grader_catalogs_have_the_same_keys():
    keys = {lang: {k for k in catalog(lang) if k.startswith("grader.")} for lang in LANGS}
    assert keys["en"] == keys["zh"], keys["en"] ^ keys["zh"]
    hints = [k for k in keys["en"] if k.startswith("grader.hints.")]
    assert len(hints) == len(MISTAKE)
    assert len(set(catalog("en")[k] for k in hints)) == len(hints), "two mistakes share a hint"


def test_language_follows_the_locale():
    assert default_lang({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert default_lang({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert default_lang({"LC_MESSAGES": "zh_TW"}) == "zh"
    assert default_lang({}) == "en"


def run_cli(*args, env_extra=None, home):
    env = {"PATH": "/usr/bin:/bin", "ATTENTION_LAB_HOME": str(home), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_speaks_chinese_from_the_flag_or_the_locale(tmp_path):
    (tmp_path / "ex03_scoring.py").write_text(apply_mistake(EX03, MISTAKE["ex03", "dot_scale_value_size"]))
    done = run_cli("ex03", "--target", str(tmp_path), "--lang", "zh", home=tmp_path / "h")
    assert done.returncode == 1
    assert "编号" in done.stdout and "未通过" in done.stdout and "0/1 个练习通过。" in done.stdout
    assert hint_text("ex03", MISTAKE["ex03", "dot_scale_value_size"], "zh") in done.stdout
    # Chinese punctuation in the problem lines: full-width colons and brackets, no "check:" or "(file):".
    assert "\n  检查：" in done.stdout and "\n  问题：" in done.stdout and "\n  提示：" in done.stdout
    assert "（ex03_scoring.py）：未通过" in done.stdout and "检查:" not in done.stdout
    done = run_cli("ex03", "--target", str(tmp_path), "--json",
                   env_extra={"LANG": "zh_CN.UTF-8"}, home=tmp_path / "h")
    report = json.loads(done.stdout)
    assert report["lang"] == "zh"
    checks = report["exercises"][0]["checks"]
    assert "dot_scale_value_size" in [c["mistake"] for c in checks]
    assert all(c["id"].startswith("ex03.") for c in checks)


def test_cli_hint_lists_each_pitfall_once_in_either_language(tmp_path):
    for lang in LANGS:
        done = run_cli("hint", "ex03", "--lang", lang, home=tmp_path)
        assert done.returncode == 0, done.stderr
        lines = [line.split(". ", 1)[1] for line in done.stdout.splitlines()[1:]]
        assert len(lines) == len(set(lines)) == len(checks_registry.for_exercise("ex03").MISTAKES)
        assert hint_text("ex03", MISTAKE["ex03", "no_dropout"], lang) in lines


def test_a_property_names_its_result_in_the_report_language():
    message = ("prop.weights_sum", {"result": "output", "q": 0, "b": 1, "sum": "0.29", "want": "1"})
    assert render(message, "zh").startswith(catalog("zh")["grader.compare.field.output"] + "：")
    assert "output" not in render(message, "zh") and render(message, "en").startswith("output: ")


def test_grading_client_and_notebook_pass_the_language():
    command = grading_client.grader_command(["ex03"], lang="zh")
    assert command[-2:] == ["--lang", "zh"]
    out = io.StringIO()
    assert notebooks.grade_in_notebook("ex00", lang="zh", history=["", "print(1)"], out=out) is None
    assert "的答案单元还没有运行过" in out.getvalue()


def test_zh_notebooks_grade_in_chinese():
    text = (ROOT / "notebooks" / "zh" / "ex03_scoring.ipynb").read_text(encoding="utf-8")
    assert 'grade_in_notebook(\\"ex03\\", lang=\\"zh\\")' in text
    assert shutil.which("python3")


def test_no_catalog_field_shadows_the_lookup_arguments():
    """t(key, lang, **fields): a field named key or lang could never be filled."""
    for lang in LANGS:
        for name, text in catalog(lang).items():
            if name.startswith("grader.") and isinstance(text, str):
                assert not re.search(r"\{(key|lang)\}", text), name


def test_notebook_upload_and_lost_server_messages_exist_in_chinese(tmp_path):
    """The messages the grader prints about notebooks, uploads and a lost sandbox, in zh."""
    from course.app.grading_client import upload_problem
    from grader.notebook_submit import scan_notebook
    from grader.sandbox import lost_reason
    from grader.text import render

    broken = tmp_path / "ex03_scoring.ipynb"
    broken.write_text("{", encoding="utf-8")
    _, problems = scan_notebook(broken, "zh")
    assert "JSON 无效" in problems[0] and "not a notebook" not in problems[0]
    assert "is empty" not in upload_problem("ex03", "a.py", b"", "zh")
    assert "空文件" in upload_problem("ex03", "a.py", b"", "zh")
    hung = render(lost_reason(None, True, 31.0, tmp_path), "zh")
    assert "31 秒" in hung and "stopped" not in hung
    assert "(SIGKILL)" in render(lost_reason(-9, False, 0.0, tmp_path), "en")
