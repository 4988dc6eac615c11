"""Stubs and references expose the same public API and the same weights layout."""

import importlib
import inspect

import pytest
import torch

from course.common.exercise_index import EXERCISES
from grader.checks.base import reference_state  # noqa: F401  (import check)

CONSTRUCT = {
    "NWKernelRegression": (),
    "AdditiveAttention": (3, 4, 5, 0.1),
    "DotProductAttention": (0.1,),
    "Seq2SeqAttentionDecoder": (10, 4, 6, 2, 0.1),
    "MultiHeadAttention": (4, 5, 6, 8, 2, 0.1),
    "PositionWiseFFN": (4, 7, 5),
    "AddNorm": (4, 0.1),
    "TransformerEncoderBlock": (8, 16, 2, 0.1),
    "TransformerDecoderBlock": (8, 16, 2, 0.1, 0),
    "MaskedDotProductAttention": (0.1,),
}


def public(module):
    return {n: v for n, v in vars(module).items() if not n.startswith("_")
            and (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == module.__name__}


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_same_names_and_signatures(ex):
    stub = importlib.import_module(f"exercises.{ex.module}")
    ref = importlib.import_module(f"solutions.{ex.module}")
    assert set(public(stub)) == set(public(ref))
    assert set(ex.names) <= set(public(ref))
    for name, obj in public(ref).items():
        other = public(stub)[name]
        if inspect.isfunction(obj):
            assert inspect.signature(obj) == inspect.signature(other), name
        else:
            methods = {m for m, v in vars(obj).items() if inspect.isfunction(v) and not m.startswith("_")}
            methods.add("__init__")
            for method in methods:
                assert inspect.signature(getattr(obj, method)) == inspect.signature(getattr(other, method)), \
                    f"{name}.{method}"


@pytest.mark.parametrize("cls_name", sorted(CONSTRUCT))
def test_same_state_dict_keys_and_shapes(cls_name):
    ex = next(e for e in EXERCISES if cls_name in e.names)
    stub_cls = getattr(importlib.import_module(f"exercises.{ex.module}"), cls_name)
    ref_cls = getattr(importlib.import_module(f"solutions.{ex.module}"), cls_name)
    ref_state = ref_cls(*CONSTRUCT[cls_name]).state_dict()
    stub_state = stub_cls(*CONSTRUCT[cls_name]).state_dict()
    assert {k: v.shape for k, v in stub_state.items()} == {k: v.shape for k, v in ref_state.items()}
    stub_cls(*CONSTRUCT[cls_name]).load_state_dict(ref_state)  # trained weights load into a stub


def test_positional_encoding_stub_says_what_to_write():
    from exercises.ex06_positional_encoding import PositionalEncoding

    with pytest.raises(NotImplementedError, match="table P"):
        PositionalEncoding(8, 0.1)


def test_rotary_stub_says_what_to_write():
    from exercises.ex09_rotary import RotaryDotProductAttention, RotaryEmbedding

    for build in (lambda: RotaryEmbedding(8), lambda: RotaryDotProductAttention(8, 0.1)):
        with pytest.raises(NotImplementedError, match="build cos and sin"):
            build()


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_stub_docstrings_point_to_the_chapter(ex):
    stub = importlib.import_module(f"exercises.{ex.module}")
    assert "chapter" in (stub.__doc__ or "").lower()
    for name, obj in public(stub).items():
        assert obj.__doc__, f"{ex.module}.{name} needs a docstring telling the learner what to do"


def test_stub_bodies_raise_not_implemented():
    from exercises.ex01_softmax import softmax

    with pytest.raises(NotImplementedError):
        softmax(torch.zeros(2))
