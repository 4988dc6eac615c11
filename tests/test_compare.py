"""The comparison messages: what differs, in the order a learner needs it."""

import torch

from grader.compare import compare_raised, compare_results, compare_tensors


def test_equal_within_tolerance_is_accepted():
    x = torch.randn(3, 4)
    assert compare_tensors("output", x, x + 1e-7) is None


def test_shape_before_dtype_before_values():
    x = torch.zeros(2, 3)
    assert "expected shape (2, 3), got (3, 2)" in compare_tensors("output", x, torch.zeros(3, 2, dtype=torch.float64))
    assert "expected dtype torch.float32, got torch.float64" in compare_tensors("output", x, x.double())
    assert "expected a tensor" in compare_tensors("output", x, None)


def test_largest_error_and_its_index():
    expected = torch.zeros(2, 3)
    got = expected.clone()
    got[1, 2] = 0.5
    got[0, 0] = 0.1
    message = compare_tensors("attention_weights", expected, got)
    assert "2 of 6 values differ" in message and "largest error 0.5 at index (1, 2)" in message


def test_nan_is_named():
    got = torch.zeros(4)
    got[2] = float("nan")
    assert "got NaN at index (2)" in compare_tensors("output", torch.zeros(4), got)


def test_gradient_keys_read_well_and_use_looser_tolerance():
    x = torch.ones(3)
    assert compare_tensors("grad.queries", x, x + 5e-4, kind="grad") is None
    assert "the gradient w.r.t. queries" in compare_results({"grad.queries": x}, {"grad.queries": x + 1})


def test_missing_result_and_exceptions():
    assert "missing" in compare_results({"attention_weights": torch.zeros(2)}, {})
    subclass = {"raised": "MyError", "raised_mro": "MyError,ValueError,Exception"}
    assert compare_raised({"raised": "ValueError"}, subclass) is None
    assert "returned normally" in compare_raised({"raised": "ValueError"}, {"raised": None})
    other = {"raised": "TypeError", "raised_mro": "TypeError"}
    assert "expected a ValueError, got TypeError" in compare_raised({"raised": "ValueError"}, other)
