"""A number written into learner code where a parameter or a size belongs, found where no call is right
(grader/diagnosis/constants.py): read from the learner's source with `ast` and the reference's, never run.
Each rule is tried on a learner-like source that has the slip and on the reference's own source, which must
give nothing. Lines are counted by hand."""

from pathlib import Path

import torch

from grader.checks.base import Check
from grader.diagnosis import constants

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"

SCALED_BY_EIGHT = '''import torch
from torch import nn


class DotProductAttention(nn.Module):
    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        scores = queries @ keys.transpose(1, 2) / (8 * self.temperature)
        return torch.bmm(self.dropout(scores.softmax(-1)), values)
'''

LEAKY_LITERAL = '''import torch.nn.functional as F
from torch import nn


class PositionWiseFFN(nn.Module):
    def __init__(self, num_inputs, ffn_num_hiddens, num_outputs, negative_slope=0.0):
        super().__init__()
        self.dense1 = nn.Linear(num_inputs, ffn_num_hiddens)
        self.dense2 = nn.Linear(ffn_num_hiddens, num_outputs)

    def forward(self, X):
        return self.dense2(F.leaky_relu(self.dense1(X), {slope}))
'''


def check(module, cls, procedure="module_forward", **spec):
    return Check("c", "c", procedure, {"module": module, "cls": cls, **spec}, target=cls)


def test_a_constant_divisor_where_the_reference_divides_by_a_square_root_is_named():
    dot = check("ex03_scoring", "DotProductAttention")
    hint, name = constants.literal_scale(SCALED_BY_EIGHT, dot, "en")
    assert name == "scale" and "your line 12 divides the scores by 8, a constant" in hint
    assert "sqrt(d)" in constants.literal_scale(SCALED_BY_EIGHT, dot, "zh")[0]
    reference = (SOLUTIONS / "ex03_scoring.py").read_text(encoding="utf-8")
    assert constants.literal_scale(reference, dot, "en") is None  # it takes a square root
    # a division by 2 (a half, a mean) is no scale written in
    assert constants.literal_scale(SCALED_BY_EIGHT.replace("(8 * self.temperature)", "2"), dot, "en") is None


def test_a_number_passed_where_the_reference_passes_a_parameter_is_named():
    ffn = check("ex07_transformer", "PositionWiseFFN")
    hint, name = constants.literal_argument(LEAKY_LITERAL.format(slope="0.01"), ffn, "en")
    assert name == "negative_slope"  # nn.LeakyReLU(negative_slope) in the reference: the same operation
    assert "your line 12 passes 0.01, a number written in, to `F.leaky_relu`" in hint
    assert constants.literal_argument(LEAKY_LITERAL.format(slope="self.negative_slope"), ffn, "en") is None
    reference = (SOLUTIONS / "ex07_transformer.py").read_text(encoding="utf-8")
    assert constants.literal_argument(reference, ffn, "en") is None


def test_a_size_written_in_where_a_parameter_gives_the_size_is_named():
    rotary = check("ex09_rotary", "RotaryEmbedding", "construct", init_args=(8, 50))
    source = ("import torch\nfrom torch import nn\n\n\nclass RotaryEmbedding(nn.Module):\n"
              "    def __init__(self, num_hiddens, max_len=1000, base=10000):\n"
              "        super().__init__()\n"
              "        m = torch.arange(2048, dtype=torch.float32)\n")
    reference = {"cos": torch.zeros(50, 4)}
    learner = {"ok": {"cos": torch.zeros(2048, 4)}}
    hint, name = constants.written_size(source, [(rotary, reference, learner)], "en")
    assert name == "max_len" and "your line 8 has 2048 written in" in hint and "(50 in this check)" in hint
    right = {"ok": {"cos": torch.zeros(50, 4)}}
    assert constants.written_size(source, [(rotary, reference, right)], "en") is None  # the shape is right
    assert constants.written_size(source.replace("2048", "max_len"), [(rotary, reference, learner)], "en") is None


def test_a_value_written_in_is_found_in_arithmetic_before_a_call_argument():
    source = ("def f(X, num_heads, num_kv_heads=2):\n"
              "    X = X.permute(0, 2, 1, 3)\n"
              "    group = num_heads // 2\n"
              "    return X, group\n")
    assert constants.written_constant(source, "f", "num_kv_heads", 2) == (3, 2, "value")  # not line 2's permute


def test_a_tensor_methods_number_is_matched_with_the_functions_argument_after_the_tensor():
    # the reference repeats the lengths num_heads times (torch.repeat_interleave(valid_lens, self.num_heads, ...));
    # valid_lens.repeat_interleave(2, ...) passes 2 as that same argument, never as the tensor itself
    mha = check("ex05_multihead", "MultiHeadAttention")
    source = ("class MultiHeadAttention:\n"
              "    def forward(self, queries, keys, values, valid_lens):\n"
              "        valid_lens = valid_lens.repeat_interleave({n}, dim=0)\n")
    hint, name = constants.literal_argument(source.format(n=2), mha, "en")
    assert name == "num_heads" and "your line 3 passes 2" in hint
    assert constants.literal_argument(source.format(n="self.num_heads"), mha, "en") is None


def test_a_source_nested_too_deep_to_parse_is_graded_without_crashing_the_grader():
    """The diagnosis reads the learner's source with one bounded parser (learner_lines.parse_source): a file the
    parser gives up on (RecursionError) is reported as a file that does not import, never a crash of the grader."""
    from grader.core import Submission, grade_submissions
    from grader.diagnosis.learner_lines import parse_source

    source = (Path(__file__).resolve().parent.parent / "solutions" / "ex03_scoring.py").read_text(encoding="utf-8")
    deep = source + "\n_chain = " + "+".join(["1"] * 50_000) + "\n"
    assert parse_source(deep) is None  # the parser gives up on it: the case is hit
    result = grade_submissions([Submission("ex03", deep, "deep.py")])[0]
    assert result.status == "error" and not result.passed
