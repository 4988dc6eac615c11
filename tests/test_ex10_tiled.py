"""Exercise 10's own rules: an answer that is not tiled (the whole score matrix, a mask over all keys, a softmax
over all keys) fails the measured check and only it, with a message naming the tensor and the limit; every correct
style stays under the limit at every block size a variant may ask for; key_blocks' pairs are compared as one
tensor whatever sequence the learner returns; stub and reference say the same.

Graded in this process with the grader's own procedures and verdicts (tests/exercise_variant_support.py): the
files are trusted test files.
"""

import inspect
from pathlib import Path

import pytest

from exercises import ex10_tiled_attention as stub
from grader import checks as checks_registry
from grader import variants
from grader.core import reference_modules
from grader.harness.procedures import LARGEST_NUMEL
from solutions import ex10_tiled_attention as ref
from tests.exercise_variant_support import PROCEDURES, built, judge_in_process, load_module

ROOT = Path(__file__).resolve().parent.parent
SOURCE = (ROOT / "solutions" / "ex10_tiled_attention.py").read_text(encoding="utf-8")
STYLES = [ROOT / "solutions" / "ex10_tiled_attention.py"] + sorted((ROOT / "tests" / "variants" / "ex10").glob("*.py"))
MEASURED = "ex10.tiled_attention.9"
LOOP = '''    for start, stop in key_blocks(keys.shape[1], block_size):
        scores = torch.bmm(queries, keys[:, start:stop].transpose(1, 2)) / math.sqrt(d)  # (B, n_q, blk)
        if valid_lens is not None:
            mask = block_mask(valid_lens, batch, num_queries, start, stop).to(queries.device)  # (B, n_q, blk)
'''

NOT_TILED = {
    # the whole (B, n_q, n_k) score matrix, then the softmax of ex01 written out
    "full_scores": '''    d = queries.shape[-1]
    key_blocks(keys.shape[1], block_size)  # its ValueError for a bad block size
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k): every score at once
    if valid_lens is not None:
        scores = scores.masked_fill(~block_mask(valid_lens, *scores.shape[:2], 0, scores.shape[2]), float("-inf"))
    if not scores.shape[-1]:
        return torch.zeros(*scores.shape[:2], values.shape[-1], dtype=queries.dtype)
    top = scores.amax(dim=-1, keepdim=True)
    p = torch.exp(scores - torch.where(torch.isfinite(top), top, torch.zeros_like(top)))
    total = p.sum(dim=-1, keepdim=True)
    return torch.bmm(p, values) / torch.where(total > 0, total, torch.ones_like(total))
''',
    # tiled scores, but one mask over all the keys built first and sliced per block
    "full_mask": LOOP.replace(
        "            mask = block_mask(valid_lens, batch, num_queries, start, stop).to(queries.device)",
        "            mask = everything[:, :, start:stop]").replace(
        "    for start, stop in",
        "    if valid_lens is not None:\n"
        "        everything = block_mask(valid_lens, batch, num_queries, 0, keys.shape[1])  # (B, n_q, n_k)\n"
        "    for start, stop in", 1),
}


def _not_tiled(kind):
    """The reference with tiled_attention's body (or its loop head) replaced by a version that is not tiled."""
    if kind == "full_scores":
        head = SOURCE.index('    batch, num_queries, d = queries.shape\n    like = ')
        return SOURCE[:head] + NOT_TILED[kind]
    assert SOURCE.count(LOOP) == 1
    return SOURCE.replace(LOOP, NOT_TILED[kind])


@pytest.fixture(scope="module")
def published():
    return built("ex10", 0)


@pytest.mark.parametrize("kind", sorted(NOT_TILED))
def test_an_answer_that_is_not_tiled_fails_the_measured_check_and_only_it(kind, published):
    module = load_module("ex10", _not_tiled(kind), f"not_tiled_{kind}")
    assert judge_in_process(module, *published) == [MEASURED]


def test_a_softmax_over_all_keys_fails_the_measured_check():
    softmax = "    return torch.bmm(torch.softmax(scores, dim=-1).nan_to_num(0.0), values)\n"
    source = _not_tiled("full_scores").replace("    top = scores.amax(dim=-1, keepdim=True)\n", softmax)
    module = load_module("ex10", source, "torch_softmax")
    checks, references = built("ex10", 0)
    index = [c.id for c in checks].index(MEASURED)
    assert judge_in_process(module, [checks[index]], [references[index]]) == [MEASURED]


def _measured_property(source, tag, block_size=None):
    """(the measured check's verdict on its own property, the learner's largest tensor) for a trusted file."""
    checks, _ = built("ex10", 0)
    check = next(c for c in checks if c.id == MEASURED)
    spec = dict(check.spec, kwargs=dict(check.spec["kwargs"], **({} if block_size is None else
                                                                  {"block_size": block_size})))
    module = load_module("ex10", source, tag)
    results = PROCEDURES[check.procedure](lambda name: module if name == module.EXERCISE_MODULE
                                          else reference_modules(name), spec)
    verdicts = [prop(results, spec) for prop in check.properties]
    return [v for v in verdicts if v], results[LARGEST_NUMEL]


def test_the_message_names_the_largest_tensor_and_the_limit():
    (message,), numel = _measured_property(_not_tiled("full_scores"), "named")
    key, fields = message
    assert key == "prop.ex10.full_scores" and numel == 16 * 300
    assert fields == {"shape": "(1, 16, 300)", "numel": 4800, "full": "(1, 16, 300)", "limit": 1200}


@pytest.mark.parametrize("path", STYLES, ids=[p.stem for p in STYLES])
def test_every_correct_style_stays_under_the_limit_at_every_block_size_a_variant_asks_for(path):
    source = path.read_text(encoding="utf-8")
    largest = {}
    for block in (1, 2, 17, max(variants.PARAMETERS["ex10"].choices)):
        failed, largest[block] = _measured_property(source, f"limit_{path.stem}_{block}", block)
        assert failed == [], (block, failed)
    assert all(0 < n < 16 * 300 // 4 for n in largest.values()), largest  # something was measured, under the limit


@pytest.mark.parametrize("returned", [
    "[[start, min(start + block_size, num_keys)] for start in range(0, num_keys, block_size)]",  # lists
    "tuple((start, min(start + block_size, num_keys)) for start in range(0, num_keys, block_size))",
    "((start, min(start + block_size, num_keys)) for start in range(0, num_keys, block_size))",  # a generator
    "[(torch.tensor(start), torch.tensor(min(start + block_size, num_keys))) for start in range(0, num_keys, block_size)]",
])
def test_key_blocks_may_return_any_sequence_of_integer_pairs(returned, published):
    written = "    return [(start, min(start + block_size, num_keys)) for start in range(0, num_keys, block_size)]"
    source = SOURCE.replace(written, f"    return {returned}")
    assert source != SOURCE
    module = load_module("ex10", source, f"pairs_{abs(hash(returned))}")
    assert judge_in_process(module, *published) == []


def test_key_blocks_of_floats_fail_their_checks(published):
    source = SOURCE.replace("    return [(start, min(start + block_size, num_keys))",
                            "    return [(float(start), float(min(start + block_size, num_keys)))")
    module = load_module("ex10", source, "float_pairs")
    checks, references = published
    kept = [i for i, c in enumerate(checks) if c.target == "key_blocks"]  # tiled_attention raises on float slices
    failing = judge_in_process(module, [checks[i] for i in kept], [references[i] for i in kept])
    assert failing == [f"ex10.key_blocks.{n}" for n in (1, 2, 3, 4)]  # not 5 (no block) nor 6 (raises)


def test_stub_and_reference_say_the_same_and_every_mistake_has_hints_in_both_languages():
    from course.common.i18n import catalog

    for name in ("key_blocks", "online_softmax_update", "block_mask", "tiled_attention"):
        assert inspect.signature(getattr(stub, name)) == inspect.signature(getattr(ref, name)), name
        assert getattr(stub, name).__doc__ == getattr(ref, name).__doc__, name
    for lang in ("en", "zh"):
        hints = {key.rsplit(".", 1)[1] for key in catalog(lang) if key.startswith("grader.hints.ex10.")}
        assert {m.id for m in checks_registry.for_exercise("ex10").MISTAKES} == hints, lang
