"""Chapter 4 maths: alignment tables, the worked Bahdanau step, gradient paths, shapes."""

import math

import numpy as np
import pytest
import torch

from course.common.i18n import t
from course.lessons import ch04

E = ch04.EXAMPLE
INPUTS = (E["s"], [E["h1"], E["h2"]], E["W_s"], E["W_h"], E["v"])


def softmax_np(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def test_cat_row_gives_the_published_weight():
    table = ch04.alignment_table(ch04.SCORES["猫"])
    assert list(table["word"]) == list(ch04.SOURCE)
    assert round(float(table["alpha"][2]), 3) == 0.867
    np.testing.assert_allclose(table["alpha"], softmax_np(ch04.SCORES["猫"]), rtol=1e-12)
    np.testing.assert_allclose(table["exp(e - max e)"], np.exp(np.array(ch04.SCORES["猫"]) - 3.8), rtol=1e-12)


def test_alignment_is_shift_invariant_and_validates_input():
    scores = np.array(ch04.SCORES["坐"])
    a = ch04.alignment_table(scores)["alpha"].to_numpy()
    b = ch04.alignment_table(scores + 5)["alpha"].to_numpy()
    np.testing.assert_allclose(a, b, rtol=1e-12)
    with pytest.raises(ValueError, match="one score per source word"):
        ch04.alignment_table([1.0, 2.0])
    with pytest.raises(ch04.BadInput, match="finite"):
        ch04.alignment_table([1.0, float("nan"), 0, 0, 0, 0, 0])


def test_every_target_word_reads_a_plausible_source_word():
    expected = {"黑": "black", "猫": "cat", "坐": "sat", "在": "on", "垫子": "mat", "上": "on"}
    assert set(ch04.SCORES) == set(ch04.TARGETS)
    for target, word in expected.items():
        table = ch04.alignment_table(ch04.SCORES[target])
        assert table["word"][table["alpha"].idxmax()] == word


def test_worked_example_gives_the_numbers_in_the_text():
    step = ch04.bahdanau_step(*INPUTS)
    e1, e2 = math.tanh(2), math.tanh(1) + math.tanh(2)  # by hand: W = I, v = [1, 1]
    a = softmax_np([e1, e2])
    c = a[0] * np.array([1, 0]) + a[1] * np.array([0, 2])
    np.testing.assert_allclose(step["e"], [e1, e2], rtol=1e-6)
    np.testing.assert_allclose(step["alpha"], a, rtol=1e-6)
    np.testing.assert_allclose(step["c"], c, rtol=1e-6)
    np.testing.assert_allclose(step["p"], softmax_np(c), rtol=1e-6)
    # The figures the chapter text quotes (its c_2 = 1.364 comes from rounding alpha_2 first).
    np.testing.assert_allclose(step["e"], [0.964, 1.726], atol=5e-4)
    np.testing.assert_allclose(step["alpha"], [0.318, 0.682], atol=5e-4)
    np.testing.assert_allclose(step["c"], [0.318, 1.364], atol=1e-3)
    np.testing.assert_allclose(step["p"], [0.260, 0.740], atol=5e-4)


def test_bahdanau_step_matches_the_formula_on_random_inputs():
    rng = np.random.default_rng(0)
    s, hs = rng.normal(size=3), rng.normal(size=(4, 3))
    W_s, W_h, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=5)
    step = ch04.bahdanau_step(s.tolist(), hs.tolist(), W_s.tolist(), W_h.tolist(), v.tolist())
    e = np.array([v @ np.tanh(W_s @ s + W_h @ h) for h in hs])
    alpha = softmax_np(e)
    np.testing.assert_allclose(step["e"], e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(step["alpha"], alpha, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(step["c"], alpha @ hs, rtol=1e-5, atol=1e-6)


def test_bad_inputs_get_clear_errors():
    with pytest.raises(ch04.BadInput, match="s: an entry is empty or not a number"):
        ch04.bahdanau_step([float("nan"), 0.0], [E["h1"], E["h2"]], E["W_s"], E["W_h"], E["v"])
    with pytest.raises(ch04.BadInput, match="same number of rows"):
        ch04.bahdanau_step(E["s"], [E["h1"]], E["W_s"], E["W_h"], [1.0, 1.0, 1.0])


@pytest.mark.parametrize("target", [0, 1])
def test_gradient_paths_split_the_total_gradient(target):
    grads = ch04.gradient_paths(*INPUTS, target=target)
    step = ch04.bahdanau_step(*INPUTS)
    onehot = torch.zeros(2)
    onehot[target] = 1
    dl_dc = step["p"] - onehot  # gradient of cross-entropy through softmax
    torch.testing.assert_close(grads["value"], step["alpha"][:, None] * dl_dc[None, :])
    # The total, from an independent autograd run of the written-out formula.
    H = torch.tensor([E["h1"], E["h2"]], requires_grad=True)
    s, v = torch.tensor(E["s"]), torch.tensor(E["v"])
    e = torch.tanh(s + H) @ v  # W_s = W_h = I
    c = torch.softmax(e, dim=0) @ H
    loss = -torch.log_softmax(c, dim=0)[target]
    loss.backward()
    torch.testing.assert_close(grads["value"] + grads["score"], H.grad)
    assert grads["loss"] == pytest.approx(float(loss.detach()))


def test_step_shapes_follow_the_sizes():
    B, T, H, Em, V = 3, 5, 6, 4, 11
    shapes = {name: shape for _, name, shape in ch04.step_shapes(B, T, H, Em, V)}
    assert shapes["query"] == (B, 1, H)
    assert shapes["keys"] == (B, T, H)
    assert shapes["features"] == (B, 1, T, H)
    assert shapes["e"] == shapes["alpha"] == (B, 1, T)
    assert shapes["c"] == (B, 1, H)
    assert shapes["rnn_in"] == (B, 1, H + Em)
    assert shapes["deep_in"] == (B, 1, 2 * H + Em)
    assert shapes["deep_out"] == (B, 1, H)
    assert shapes["logits"] == (B, 1, V)
    assert tuple(shapes) == ("query", "keys", "proj_q", "proj_k", "features", "e", "alpha", "c",
                             "rnn_in", "rnn_out", "deep_in", "deep_out", "logits")  # in the order of one step
    assert all(t(f"ch04.tensor.{name}", lang) for name in shapes for lang in ("en", "zh"))
    steps = [step for step, _, _ in ch04.step_shapes(B, T, H, Em, V)]
    assert steps == sorted(steps, key=["project", "softmax", "weighted_sum", "decode"].index)
