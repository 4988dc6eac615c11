"""The behaviour rules of grader/diagnosis/behaviour.py: each names its slip on the results that show it, and
stays silent on results that only resemble it (a different slip, or the right answer)."""

from types import SimpleNamespace

import torch

from grader.diagnosis import behaviour
from grader.report import CheckResult

CHECK = SimpleNamespace(target="DotProductAttention", tolerance_dtype=None, spec={})


def masked_weights():
    """Reference weights (2, 3, 4) with keys past valid_lens (2, then 3) masked, and the scores they come from."""
    scores = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    mask = torch.arange(4)[None, None, :] < torch.tensor([2, 3])[:, None, None]  # (2, 1, 4)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), -1), scores, mask


def test_the_mask_applied_after_the_softmax_is_named_and_the_right_weights_are_not():
    want, scores, mask = masked_weights()
    after = torch.softmax(scores, -1) * mask  # normalised over every key, then zeroed
    assert behaviour.masked_after_softmax(CHECK, {"attention_weights": want}, {"attention_weights": after})
    assert behaviour.masked_after_softmax(CHECK, {"attention_weights": want}, {"attention_weights": want}) is None
    doubled = torch.softmax(2 * scores.masked_fill(~mask, float("-inf")), -1)  # another slip: scores scaled
    assert behaviour.masked_after_softmax(CHECK, {"attention_weights": want}, {"attention_weights": doubled}) is None


def test_an_argument_changed_in_place_is_named_only_when_it_changed():
    before = torch.zeros(2, 3)
    assert behaviour.input_modified(CHECK, {"input_after.X": before}, {"input_after.X": before + 1}) == {"name": "X"}
    assert behaviour.input_modified(CHECK, {"input_after.X": before}, {"input_after.X": before.clone()}) is None


def test_a_dtype_not_kept_is_named_only_when_the_values_agree_once_cast():
    want = torch.linspace(0, 1, 6, dtype=torch.float64)
    assert behaviour.dtype_changed(CHECK, {"output": want}, {"output": want.float()})["got"] == "float32"
    assert behaviour.dtype_changed(CHECK, {"output": want}, {"output": (want + 0.5).float()}) is None


def test_an_extra_axis_of_size_one_is_named_and_other_shapes_are_not():
    want = torch.rand(5, 7)
    assert behaviour.shape_reshaped(CHECK, {"attention_weights": want}, {"attention_weights": want[:, None]})
    assert behaviour.shape_reshaped(CHECK, {"attention_weights": want}, {"attention_weights": want.T}) is None


def test_axes_in_another_order_are_named_with_the_axes_that_moved_and_other_values_are_not():
    want = torch.rand(2, 3, 4, dtype=torch.float64)
    found = behaviour.axes_permuted(CHECK, {"attention_weights": want}, {"attention_weights": want.transpose(0, 1)})
    assert found == {"result": "attention_weights", "got": "(3, 2, 4)", "want": "(2, 3, 4)", "axes": "0, 1"}
    reshaped = want.reshape(3, 2, 4)  # the right shape for a swap, but the values regrouped, not transposed
    assert behaviour.axes_permuted(CHECK, {"attention_weights": want}, {"attention_weights": reshaped}) is None
    assert behaviour.axes_permuted(CHECK, {"attention_weights": want}, {"attention_weights": want}) is None


def test_entries_left_at_zero_are_named_and_other_wrong_entries_are_not():
    want = torch.rand(1, 6, 5, dtype=torch.float64) + 0.1
    unfilled = want.clone()
    unfilled[..., -1] = 0.0  # the last column of an odd width never computed
    found = behaviour.entries_unfilled(CHECK, {"P": want}, {"P": unfilled})
    assert found == {"result": "P", "count": "6", "index": "(0, 0, 4)"}
    halved = want.clone()
    halved[..., -1] /= 2  # wrong values, not zeros
    assert behaviour.entries_unfilled(CHECK, {"P": want}, {"P": halved}) is None
    assert behaviour.entries_unfilled(CHECK, {"P": want}, {"P": torch.zeros_like(want)}) is None  # nothing right


def test_rows_in_another_order_and_values_in_other_places_are_named_and_a_changed_value_is_not():
    want = torch.arange(12.0).reshape(3, 4)
    rows = behaviour.slices_permuted(CHECK, {"output": want}, {"output": want[[1, 2, 0]]})
    assert rows == {"result": "output", "axis": "0", "index": "0", "source": "1"}
    regrouped = want.reshape(3, 2, 2).transpose(1, 2).reshape(3, 4)  # columns regrouped within each row
    assert behaviour.values_rearranged(CHECK, {"output": want}, {"output": regrouped})
    changed = want.clone()
    changed[0, 0] = 100.0
    assert behaviour.values_rearranged(CHECK, {"output": want}, {"output": changed}) is None
    assert behaviour.slices_permuted(CHECK, {"output": want}, {"output": changed}) is None


def test_an_error_not_raised_is_named_and_the_first_failing_check_alone_is_read():
    reference = {"raised": "ValueError"}
    failed = CheckResult("call", False, kind="mismatch")
    found = behaviour.diagnose([CHECK], [reference], [{"ok": {"raised": None}}], [failed])
    assert found and found[0] == 0 and "ValueError" in found[1] and "DotProductAttention.forward" in found[1]
    assert found[2] == "auto:DotProductAttention.forward:(condition):not_raised"
    passed = CheckResult("call", True)
    modified = {"input_after.X": torch.ones(2)}
    later = behaviour.diagnose([CHECK, CHECK], [{"output": torch.ones(2)}, {"input_after.X": torch.zeros(2)}],
                               [{"ok": {"output": torch.zeros(2)}}, {"ok": modified}], [failed, failed])
    assert later is None  # the first failing check shows no rule's evidence: a later one is not read
    assert behaviour.diagnose([CHECK], [reference], [{"ok": {"raised": None}}], [passed]) is None
