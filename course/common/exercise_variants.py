"""Per-learner exercise variants: one small integer per (learner, exercise) seeds the exercise's natural parameter.

The one definition of the variants, shared by the grader (grader/variants.py applies them to the checks),
class mode (classroom/data/variants.py assigns and stores them) and the Practice pages (the variant text).

Variant 0 is the exercise as published (self-study): every parameter has its documented default. Another
number gives the exercise's parameter another value, drawn deterministically from (exercise, number); the
learner's variant text says "your value is X", the learner writes X as the parameter's default in the public
API, and the grader calls the learner's code without the argument while the reference (and every
reference-derived mistake) is called with X explicitly. A neighbour's correct file, written for another value,
therefore fails. Exercises without a parameter here are the same on every variant.

The variant of a class submission is assigned by the class (classroom/data/variants.py), never read from the
submission: a file that says `VARIANT = 7` or reads an environment variable changes nothing, since the
reference's explicit value is all the grader uses.
"""

import hashlib
import hmac
from dataclasses import dataclass

from .i18n import t

MAX_VARIANT = 2**31 - 1  # variants are 0 .. MAX_VARIANT (they fit a 32-bit integer column)


class VariantError(ValueError):
    """A variant number that does not name a variant (negative, too large, not an integer)."""


@dataclass(frozen=True)
class Parameter:
    """One exercise's natural parameter: the keyword, its default, and the classes that take it."""

    name: str  # the keyword argument in the public API
    default: object  # variant 0's value, also the solutions' default (a number, or a name for a categorical one)
    classes: tuple  # the classes (spec["cls"]) whose constructor takes it
    choices: tuple  # the values other variants draw from (the default and known mistakes' values excluded)
    model_config: str = ""  # the trained translators' config key that takes the default explicitly (demo stage)
    functions: tuple = ()  # the functions (spec["fn"]) that take it as a keyword argument

    def written(self, value):
        """The value as the learner writes it in code: 0.37, 2500, "gelu"."""
        return repr(value) if isinstance(value, str) else f"{value:g}"


def _round_numbers(low, high, exclude=()):
    """Every number with two significant digits in [low, high], minus `exclude`: 100, 110, ..., 99000."""
    values = []
    scale = 1
    while scale * 10 <= high:
        values += [m * scale for m in range(10, 100) if low <= m * scale <= high]
        scale *= 10
    return tuple(v for v in values if v not in exclude)


def _hundredths(low, high, exclude=()):
    """Every multiple of 0.01 in [low, high], minus `exclude`: 0.3, 0.31, ..., 3.0."""
    values = (round(i / 100, 2) for i in range(round(low * 100), round(high * 100) + 1))
    return tuple(v for v in values if v not in exclude)


# 1000 is a listed learner mistake (tests/learner_bugs/ex06/base_1000.py), so no variant asks for it.
_BASES = _round_numbers(100, 99000, exclude=(1000, 10000))

# 2 .. 64 but 3 (the published default): a kernel size of 1 is refused by the exercise itself
_KERNEL_SIZES = tuple(k for k in range(2, 65) if k != 3)

# every divisor of 360 but the published 2: 23 values, so two learners rarely share one
_KV_HEADS = tuple(k for k in range(1, 361) if 360 % k == 0 and k != 2)

PARAMETERS = {
    "ex06": Parameter("base", 10000, ("PositionalEncoding",), _BASES, "pe_base"),
    "ex09": Parameter("base", 10000, ("RotaryEmbedding", "RotaryDotProductAttention"), _BASES),
    # the default kernel size of the CNN in max_path_length (receptive_field always takes it)
    "ex00": Parameter("kernel_size", 3, (), _KERNEL_SIZES, functions=("max_path_length",)),
    # the sliding window's default dilation (1: every key in the window, as published)
    "ex08": Parameter("dilation", 1, (), tuple(range(2, 41)), functions=("sliding_window_mask",)),
    # the softmax temperature: softmax(X / temperature), in softmax and masked_softmax
    "ex01": Parameter("temperature", 1.0, (), _hundredths(0.3, 3.0, exclude=(1.0,)),
                      functions=("softmax", "masked_softmax")),
    # the scores' temperature in DotProductAttention and AdditiveAttention; 0.5, 2 and 3 excluded: 1/sqrt(d) and sqrt(d) for the
    # checks' d = 4 and 9 are what the listed mistakes dot_no_scale and dot_scale_by_d compute
    "ex03": Parameter("temperature", 1.0, ("DotProductAttention", "AdditiveAttention"),
                      _hundredths(0.3, 3.0, exclude=(0.5, 1.0, 2.0, 3.0))),
    # the attention's score temperature, handed to ex03's AdditiveAttention (the trained translator: pinned to 1.0)
    "ex04": Parameter("temperature", 1.0, ("Seq2SeqAttentionDecoder",), _hundredths(0.3, 3.0, exclude=(1.0,))),
    # the heads' score temperature, handed to ex03's DotProductAttention (the trained translators: pinned to 1.0)
    "ex05": Parameter("temperature", 1.0, ("MultiHeadAttention",), _hundredths(0.3, 3.0, exclude=(0.5, 1.0, 2.0, 3.0))),
    # the FFN's leaky-ReLU slope (0.0: the ReLU, as published; 1 would be the listed mistake ffn_no_relu)
    "ex07": Parameter("negative_slope", 0.0, ("PositionWiseFFN", "TransformerEncoderBlock", "TransformerDecoderBlock"),
                      _hundredths(0.01, 0.5), "ffn_negative_slope"),
    # the Gaussian kernel's default width w (the learned width of NWKernelRegression is not a default)
    "ex02": Parameter("w", 1.0, (), _hundredths(0.3, 3.0, exclude=(1.0,)),
                      functions=("gaussian_kernel_weights", "nadaraya_watson")),
    # the default number of keys per block of the tiled attention (16 as published); every block size gives the
    # same output, so key_blocks shows it, and the measured check bounds the largest tensor tiled_attention makes
    "ex10": Parameter("block_size", 16, (), tuple(b for b in range(2, 65) if b != 16),
                      functions=("key_blocks", "tiled_attention")),
    # the default number of key/value heads: a divisor of 360, the query heads of every check that leaves it to the
    # default (grader/checks/ex11.py DEFAULT_HEADS), so that every value builds; 2 as published
    "ex11": Parameter("num_kv_heads", 2, ("GroupedQueryAttention",), _KV_HEADS),
}


@dataclass(frozen=True)
class Variant:
    """One exercise's variant: its number and its parameter values ((name, value), ...); () without any."""

    ex_id: str
    number: int
    params: tuple = ()

    def kwargs(self):
        """The parameters as keyword arguments for the reference."""
        return dict(self.params)

    def is_default(self):
        """Is this the published exercise (every parameter at its default)?"""
        parameter = PARAMETERS.get(self.ex_id)
        return parameter is None or self.kwargs().get(parameter.name) == parameter.default


def check_number(number):
    """The variant number as an int, or VariantError saying what is wrong and what is allowed."""
    if isinstance(number, bool) or not isinstance(number, int):
        try:
            number = int(str(number).strip())
        except ValueError:
            raise VariantError(f"variant {number!r} is not a whole number; use 0 .. {MAX_VARIANT}") from None
    if not 0 <= number <= MAX_VARIANT:
        raise VariantError(f"variant {number} is out of range; use 0 .. {MAX_VARIANT} (0 is the published exercise)")
    return number


def _draw(ex_id, number, choices):
    """choices[i] for an index drawn from sha256(exercise, number): deterministic, uniform enough."""
    digest = hashlib.sha256(f"attention-lab-variant:{ex_id}:{number}".encode()).digest()
    return choices[int.from_bytes(digest[:8], "big") % len(choices)]


def variant(ex_id, number):
    """The Variant `number` of exercise `ex_id` (VariantError for a bad number)."""
    number = check_number(number)
    parameter = PARAMETERS.get(ex_id)
    if parameter is None:
        return Variant(ex_id, number)
    value = parameter.default if number == 0 else _draw(ex_id, number, parameter.choices)
    return Variant(ex_id, number, ((parameter.name, value),))


def assign(secret, learner_id, ex_id):
    """A class's variant for one learner and exercise: HMAC(class secret, learner, exercise), never 0."""
    message = f"{learner_id}:{ex_id}".encode()
    digest = hmac.new(str(secret).encode(), message, hashlib.sha256).digest()
    return 1 + int.from_bytes(digest[:8], "big") % MAX_VARIANT


def describe(chosen):
    """The variant's parameters as text fields: [(name, value as written in code)]."""
    parameter = PARAMETERS[chosen.ex_id] if chosen.params else None
    return [(name, parameter.written(value)) for name, value in chosen.params]


def variant_line(ex_id, number, lang="en"):
    """One line for the exercise text: the learner's variant and the value(s) to write as defaults."""
    chosen = variant(ex_id, number)
    if not chosen.params:
        return t("grader.variant.none", lang, ex_id=ex_id, variant=chosen.number)
    if chosen.number == 0:
        defaults = "".join(t("grader.variant.defaults", lang, name=n, value=v) for n, v in describe(chosen))
        return t("grader.variant.published", lang, ex_id=ex_id, params=defaults)
    params = "; ".join(t("grader.variant.param", lang, name=n, value=v) for n, v in describe(chosen))
    return t("grader.variant.line", lang, ex_id=ex_id, variant=chosen.number, params=params)
