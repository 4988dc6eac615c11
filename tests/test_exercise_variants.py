"""Per-learner exercise variants (grader/variants.py): every correct file written for its variant passes on it,
a neighbour's correct file written for another variant fails, and a variant is never taken from the file.

The many-variant tests grade in this process (tests/exercise_variant_support.py: the grader's own procedures
and verdicts on trusted files, without the sandbox and the demo stage); the sandboxed path is graded on a few
variants, including the forged ones.
"""

import random
from pathlib import Path

import pytest
import torch

from course.common.exercise_index import EXERCISES as EXERCISE_INDEX, get as get_exercise
from grader import checks as checks_registry
from grader import variants
from grader.core import Submission, grade_submissions
from tests.exercise_variant_support import built, judge_in_process, load_module, personalise

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = sorted(variants.PARAMETERS)
ALL = [ex.id for ex in EXERCISE_INDEX]
SAMPLED = random.Random(20261205).sample(range(1, variants.MAX_VARIANT + 1), 200)
NEIGHBOUR_PAIRS = 200  # (mine, neighbour's) pairs per exercise
SWEEP_CHECKS = 3  # checks the variant changes, graded per variant (drawn by the variant: 200 variants cover them all)


def correct_files(ex_id):
    """The reference and every correct file in another style (tests/variants/exNN/)."""
    reference = ROOT / "solutions" / get_exercise(ex_id).filename
    return [reference] + sorted((ROOT / "tests" / "variants" / ex_id).glob("*.py"))


# ---- the variants themselves ------------------------------------------------------------------------


PUBLISHED = {  # each parameter's default, as the exercises say
    "ex00": ("kernel_size", 3), "ex01": ("temperature", 1.0), "ex02": ("w", 1.0), "ex03": ("temperature", 1.0),
    "ex04": ("temperature", 1.0), "ex05": ("temperature", 1.0), "ex06": ("base", 10000),
    "ex07": ("negative_slope", 0.0), "ex08": ("dilation", 1), "ex09": ("base", 10000),
    "ex10": ("block_size", 16),
    "ex11": ("num_kv_heads", 2),
}
# values of listed mistakes (tests/learner_bugs, grader/checks MISTAKES), never asked for
EXCLUDED = {"ex03": {0.5, 2.0, 3.0}, "ex05": {0.5, 2.0, 3.0}, "ex06": {1000}, "ex09": {1000}}


def test_variant_zero_is_the_published_exercise():
    assert set(PUBLISHED) == set(EXERCISES)
    for ex_id, (name, value) in PUBLISHED.items():
        chosen = variants.variant(ex_id, 0)
        assert chosen.is_default() and chosen.kwargs() == {name: value}
    assert all(variants.variant(ex_id, 5).params == () for ex_id in ALL if ex_id not in EXERCISES)


def test_variants_are_deterministic_and_spread():
    for ex_id, (name, published) in PUBLISHED.items():
        values = [variants.variant(ex_id, n).kwargs()[name] for n in SAMPLED]
        assert values == [variants.variant(ex_id, n).kwargs()[name] for n in SAMPLED]
        assert len(set(values)) >= min(100, 0.75 * len(variants.PARAMETERS[ex_id].choices)), (ex_id, len(set(values)))
        assert published not in values and not EXCLUDED.get(ex_id, set()) & set(values)


@pytest.mark.parametrize("bad", [-1, variants.MAX_VARIANT + 1, "seven", 2.5, None, True])
def test_a_bad_variant_number_is_refused_with_what_is_allowed(bad):
    with pytest.raises(variants.VariantError, match=r"0 \.\. 2147483647"):
        variants.variant("ex06", bad)


def test_a_class_assigns_each_learner_a_nonzero_variant_from_its_secret():
    first = variants.assign("class secret", 17, "ex06")
    assert first == variants.assign("class secret", 17, "ex06") and first != 0
    assert first != variants.assign("class secret", 18, "ex06")
    assert first != variants.assign("another class", 17, "ex06")
    spread = {variants.assign("s", learner, "ex06") for learner in range(100)}
    assert len(spread) == 100


def test_the_learner_is_run_without_the_variants_parameter():
    checks = variants.apply(checks_registry.for_exercise("ex06").build(), variants.variant("ex06", 9))
    table = checks[0]
    assert table.spec["init_kwargs"]["base"] == variants.variant("ex06", 9).kwargs()["base"]
    assert "base" not in variants.learner_spec(table.spec).get("init_kwargs", {})
    assert "variant" not in variants.learner_spec(table.spec)


def test_a_stated_number_of_kv_heads_is_kept_and_a_default_one_gets_the_variants():
    """ex11's parameter shapes the weights: a check that states num_kv_heads (multi-query, grouped, one per head)
    keeps it on every variant; a check that leaves it to the default gets the variant's value for the reference
    only, with num_heads a multiple of it. A value with_parameter set (ex09's base) is still replaced."""
    chosen = variants.variant("ex11", 9)
    value = chosen.kwargs()["num_kv_heads"]
    assert value != 2
    checks = variants.build_checks(checks_registry.for_exercise("ex11"), chosen)
    stated = [c for c in checks if "num_kv_heads" in c.spec.get("init_kwargs", {}) and not c.spec.get("variant_kwargs")]
    left = [c for c in checks if c.spec.get("variant_kwargs")]
    assert {c.spec["init_kwargs"]["num_kv_heads"] for c in stated} == {1, 2, 3, 4, 6}  # as build() writes them
    assert len(left) == 4 and all(c.spec["init_kwargs"]["num_kv_heads"] == value for c in left)  # 2 published, 2 drawn
    assert all(c.spec["init_args"][1] % value == 0 for c in left)
    assert all("num_kv_heads" not in variants.learner_spec(c.spec).get("init_kwargs", {}) for c in left)
    rotary = variants.build_checks(checks_registry.for_exercise("ex09"), variants.variant("ex09", 9))
    explicit = [c for c in rotary if c.spec.get("needs_parameter") == "base"]
    assert explicit and all(c.spec["init_kwargs"]["base"] == variants.variant("ex09", 9).kwargs()["base"]
                            and c.spec["variant_kwargs"] == ("base",) for c in explicit)


def test_the_variant_text_says_the_value_in_both_languages():
    value = variants.describe(variants.variant("ex09", 3))[0][1]
    en, zh = variants.variant_line("ex09", 3, "en"), variants.variant_line("ex09", 3, "zh")
    assert f"base={value}" in en and "variant 3" in en
    assert f"base={value}" in zh and "变体 3" in zh
    assert "10000" in variants.variant_line("ex06", 0, "en")


# ---- many variants, in process ----------------------------------------------------------------------


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors: one torch thread, as the grader runs them (many threads thrash a loaded machine)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow  # grades every correct file on 200 variants of each exercise
@pytest.mark.parametrize("ex_id", EXERCISES)
def test_every_correct_file_passes_on_every_sampled_variant(ex_id):
    files = [(path, path.read_text(encoding="utf-8")) for path in correct_files(ex_id)]
    failures = []
    for number in SAMPLED:
        checks, references = built(ex_id, number, touched_only=True, sample=SWEEP_CHECKS)
        assert checks, (ex_id, number)  # the variant reaches some check
        for path, source in files:
            module = load_module(ex_id, personalise(source, ex_id, number), f"{path.stem}_{number}")
            failing = judge_in_process(module, checks, references)
            if failing:
                failures.append((path.name, number, failing[:2]))
    assert not failures, failures[:5]


@pytest.mark.slow  # grades the reference for 200 (mine, neighbour's) variant pairs of each exercise
def test_a_neighbours_correct_file_fails_on_my_variant():
    assert EXERCISES == ALL  # every exercise has a parameter
    caught = {}
    for ex_id in ALL:
        source = correct_files(ex_id)[0].read_text(encoding="utf-8")
        rng = random.Random(f"neighbours-{ex_id}")
        prepared = {}
        caught[ex_id] = 0
        for pair in range(NEIGHBOUR_PAIRS):
            mine, theirs = rng.sample(SAMPLED, 2)
            if mine not in prepared:
                prepared[mine] = built(ex_id, mine, touched_only=True, lazy=True)  # graded up to a failure
            module = load_module(ex_id, personalise(source, ex_id, theirs), f"neighbour_{pair}")
            caught[ex_id] += bool(judge_in_process(module, *prepared[mine], first_only=True))
    shares = {ex_id: f"{n / NEIGHBOUR_PAIRS:.1%}" for ex_id, n in caught.items()}
    total = sum(caught.values()) / (NEIGHBOUR_PAIRS * len(ALL))
    print(f"a neighbour's correct file fails on {total:.1%} of cross-variant pairs over all the exercises: {shares}")
    assert total >= 0.95, (total, shares)
    assert all(n >= 0.9 * NEIGHBOUR_PAIRS for n in caught.values()), shares


# ---- the sandboxed path: stored variant only, forged claims change nothing -------------------------

FORGED = {
    "claims_a_variant": "VARIANT = {other}\n",
    "reads_the_environment": "import os\nVARIANT = int(os.environ.get('ATTENTION_LAB_VARIANT', '{other}'))\n",
    "reads_a_file": "from pathlib import Path\n_claim = Path('variant.txt')\nVARIANT = int(_claim.read_text()) "
                    "if _claim.exists() else {other}\n",
}


@pytest.mark.slow  # grades in the sandbox
def test_a_file_is_graded_on_its_own_variant_whatever_it_claims(monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_VARIANT", "7")
    source = correct_files("ex06")[0].read_text(encoding="utf-8")
    mine, other = 11, 7
    submissions = [Submission("ex06", personalise(source, "ex06", mine), "mine.py", variant=mine)]
    for claim in FORGED.values():  # a file written for variant 7 that claims variant 7, graded on 11: fails
        submissions.append(Submission("ex06", claim.format(other=other) + personalise(source, "ex06", other),
                                      "forged.py", variant=mine))
    submissions.append(Submission("ex06", source, "published.py", variant=0))
    submissions.append(Submission("ex06", source, "broken.py", variant=-3))
    results = grade_submissions(submissions)
    assert results[0].passed
    assert all(r.status == "failed" for r in results[1:1 + len(FORGED)]), [r.summary for r in results]
    assert results[-2].passed
    broken = results[-1]
    assert broken.status == "error" and not broken.passed and "variant -3" in broken.checks[0].message


KNOWN = {  # registered mistakes (grader/checks/exNN.py MISTAKES), two or three per exercise
    "ex00": ("rf_no_plus_one", "cnn_off_by_one"), "ex01": ("softmax_fixed_axis", "mask_off_by_one"),
    "ex02": ("no_half", "softmax_over_queries"), "ex03": ("dot_no_scale", "additive_no_tanh"),
    "ex04": ("query_bottom_layer", "deep_output_no_tanh"), "ex05": ("reshape_without_transpose", "no_output_projection"),
    "ex06": ("sin_cos_swapped", "multiply_not_divide", "positions_from_one"),
    "ex07": ("norm_before_residual", "ffn_no_relu"), "ex08": ("window_off_by_one", "mask_fill_zero"),
    "ex09": ("rotation_direction", "exponent_j_over_d", "offset_ignored"),
    "ex10": ("last_block_dropped", "sum_not_rescaled", "mask_fill_zero"),
    "ex11": ("heads_tiled", "causal_without_offset", "inputs_cached"),
}


@pytest.mark.slow  # grades known mistakes in the sandbox on two variants
@pytest.mark.parametrize("number", [5, 123456])
def test_known_mistakes_are_named_on_a_variant(number):
    from grader.mistakes import apply_mistake

    submissions, expected = [], []
    for ex_id, ids in KNOWN.items():
        source = correct_files(ex_id)[0].read_text(encoding="utf-8")
        for mistake in (m for m in checks_registry.for_exercise(ex_id).MISTAKES if m.id in ids):
            submissions.append(Submission(ex_id, personalise(apply_mistake(source, mistake), ex_id, number),
                                          f"{mistake.id}.py", variant=number))
            expected.append(mistake.id)
    assert len(expected) == sum(len(ids) for ids in KNOWN.values())
    unnamed = [(mistake_id, result.status, result.summary[:80])
               for mistake_id, result in zip(expected, grade_submissions(submissions))
               if result.status != "failed" or mistake_id not in {c.mistake for c in result.checks}]
    assert not unnamed, unnamed


def test_the_command_line_takes_a_variant_and_refuses_a_bad_one(capsys):
    from grader.options import parse_args

    assert parse_args(["ex06", "--variant", "5"]).variant == 5
    assert parse_args(["ex06"]).variant == 0  # self-study: the published exercise
    with pytest.raises(SystemExit):
        parse_args(["ex06", "--variant", "-1"])
    assert "--variant: variant -1 is out of range" in capsys.readouterr().err


# ---- a learner's own dependency, written for its variant, under the exercises built on it -------------


def test_a_dependency_is_staged_with_its_published_default():
    number = 7
    source = personalise(correct_files("ex01")[0].read_text(encoding="utf-8"), "ex01", number)
    assert "temperature=1.0" not in source  # written for variant 7
    own = load_module("ex01", source, "own_dep")
    staged = load_module("ex01", variants.pin_published("ex01", source), "staged_dep")
    X = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    published = torch.softmax(X, dim=-1)
    assert not torch.allclose(own.masked_softmax(X, None), published)
    torch.testing.assert_close(staged.masked_softmax(X, None), published)
    torch.testing.assert_close(staged.softmax(X, -1), published)
    T = variants.variant("ex01", number).kwargs()["temperature"]
    torch.testing.assert_close(staged.softmax(X, -1, T), torch.softmax(X / T, dim=-1))  # an explicit value holds
    ex03 = load_module("ex03", variants.pin_published("ex03", personalise(
        correct_files("ex03")[0].read_text(encoding="utf-8"), "ex03", number)), "staged_ex03")
    assert ex03.DotProductAttention(0.1).temperature == 1.0
    assert ex03.DotProductAttention(0.1, 2.5).temperature == 2.5 and ex03.DotProductAttention.__name__ == "DotProductAttention"


@pytest.mark.slow  # grades in the sandbox
def test_an_exercise_graded_with_the_learners_own_dependencies_on_their_variants():
    ex01 = personalise(correct_files("ex01")[0].read_text(encoding="utf-8"), "ex01", 11)
    ex03 = correct_files("ex03")[0].read_text(encoding="utf-8")
    ex02 = correct_files("ex02")[0].read_text(encoding="utf-8")
    submissions = [Submission("ex03", personalise(ex03, "ex03", 5), "ex03.py", variant=5, dependencies={"ex01": ex01}),
                   Submission("ex02", ex02, "ex02.py", variant=0, dependencies={"ex01": ex01})]
    results = grade_submissions(submissions, references_for_dependencies=False)
    assert all(r.passed for r in results), [(r.id, r.summary) for r in results]

