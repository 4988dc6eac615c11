"""Chapter 6 maths: self vs cross attention, layer costs, the sinusoidal table and its rotations.

Expected values come from the formulas by hand (costs, path lengths), from math.sin/cos loops,
from numpy's softmax, and from torch's nn.MultiheadAttention as a second attention implementation.
"""

import math

import numpy as np
import pytest
import torch
from torch import nn

from course.lessons import ch05, ch06
from course.lessons.ch06 import positions as ch06_positions


def softmax_rows(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(("mode", "m"), [("self", 4), ("cross", 3)])
def test_attend_is_the_softmax_of_scaled_dot_products(mode, m):
    ex = ch06.attend(mode)
    Q, K = ex["queries"].to_numpy(), ex["keys"].to_numpy()  # keys = values
    assert Q.shape == (m, 4) and K.shape == (4, 4)
    weights = softmax_rows(Q @ K.T / 2.0)  # sqrt(4) = 2
    np.testing.assert_allclose(ex["scores"].to_numpy(), Q @ K.T / 2.0, atol=1e-3)
    np.testing.assert_allclose(ex["weights"].to_numpy(), weights, atol=1e-3)
    np.testing.assert_allclose(ex["output"].to_numpy(), weights @ K, atol=2e-3)
    assert list(ex["weights"].columns) == list(ch06.SOURCE)
    assert list(ex["weights"].index) == list(ch06.SOURCE if mode == "self" else ch06.TARGET)
    with pytest.raises(ValueError, match="'self' or 'cross'"):
        ch06.attend("both")


def test_example_vectors_have_one_decimal():
    X = ch06.example_vectors(ch06.SOURCE).numpy()
    np.testing.assert_allclose(X * 10, np.round(X * 10), atol=1e-4)


def test_layer_costs_by_hand():
    n, d, k = 100, 512, 3
    costs = ch06.layer_costs(n, d, k)
    assert costs["self-attention"] == (5_120_000, 1, 1)
    assert costs["rnn"] == (26_214_400, 100, 99)
    assert costs["cnn"] == (78_643_200, 1, math.ceil((n - 1) / (k - 1)))  # 50 layers of width-3 kernels
    # Doubling dilations: receptive field 1 + (k - 1)(2^L - 1) must reach n.
    layers = math.ceil(math.log2((n - 1) / (k - 1) + 1))
    assert costs["cnn-dilated"] == (78_643_200, 1, layers) == (78_643_200, 1, 6)
    table = ch06.cost_table("en", n, d, k)
    assert table["operations"].tolist() == ["5,120,000", "26,214,400", "78,643,200", "78,643,200"]
    assert table["steps"].tolist() == [1, 100, 1, 1] and table["length"].tolist() == [1, 99, 50, 6]
    with pytest.raises(ValueError, match="kernel k >= 2"):
        ch06.layer_costs(10, 8, 1)


@pytest.mark.parametrize("d", [8, 64, 512])
def test_self_attention_overtakes_the_rnn_at_n_equal_d(d):
    curve = ch06.cost_curve(d, 3).pivot(index="n", columns="arch", values="ops")
    sa, rnn = curve["self-attention"], curve["rnn"]
    assert sa[d] == rnn[d] == d**3
    assert (sa[curve.index < d] < rnn[curve.index < d]).all()
    assert (sa[curve.index > d] > rnn[curve.index > d]).all()


def test_sinusoid_table_against_math_and_the_module():
    length, d = 30, 10
    P = ch06_positions.sinusoid_table(length, d)
    for i in range(length):
        for j in range(d // 2):
            angle = i / 10000 ** (2 * j / d)
            assert P[i, 2 * j] == pytest.approx(math.sin(angle), abs=1e-12)
            assert P[i, 2 * j + 1] == pytest.approx(math.cos(angle), abs=1e-12)
    np.testing.assert_allclose(ch06_positions.module_table(length, d), P, atol=1e-6)  # float32 storage
    np.testing.assert_allclose(ch06_positions.frequencies(8), [1, 10000**-0.25, 10000**-0.5, 10000**-0.75])


def test_rotation_moves_every_position_by_delta():
    d, delta, j = 16, 7, 3
    w = 1 / 10000 ** (2 * j / d)
    R = ch06_positions.rotation(delta, j, d)
    np.testing.assert_allclose(R @ R.T, np.eye(2), atol=1e-12)
    for pos in (0, 5, 41):
        moved = R @ np.array([math.sin(pos * w), math.cos(pos * w)])
        np.testing.assert_allclose(moved, [math.sin((pos + delta) * w), math.cos((pos + delta) * w)], atol=1e-12)


@pytest.mark.parametrize(("length", "d", "delta"), [(60, 32, 5), (100, 128, 99), (8, 4, 1)])
def test_rotation_error_is_tiny_in_float64_and_bounded_in_float32(length, d, delta):
    assert ch06_positions.rotation_error(length, d, delta) < 1e-6
    table = ch06_positions.module_table(length, d)
    assert ch06_positions.rotation_error(length, d, delta, table) <= ch06_positions.FLOAT32_BOUND


def test_rotation_error_detects_a_wrong_table():
    P = ch06_positions.sinusoid_table(50, 16)
    shifted = P.copy()
    positions = np.arange(50)[:, None]
    shifted[:, 0::2] = np.sin(positions * ch06_positions.frequencies(16) + 0.3 * positions ** 2 / 50)
    assert ch06_positions.rotation_error(50, 16, 3, shifted) > 0.01  # the angle is not linear in the position
    with pytest.raises(ValueError, match="between 1 and"):
        ch06_positions.rotation_error(10, 8, 10)


def test_binary_counter_flip_rates():
    bits, flips = ch06_positions.binary_table(4)
    for i in range(16):
        assert "".join(str(b) for b in bits.loc[i]) == format(i, "04b")
    assert flips.tolist() == [1 / 8, 1 / 4, 1 / 2, 1]  # bit 3 .. bit 0


def test_periods_follow_the_frequencies():
    table = ch06_positions.period_table(64, [0, 5, 31])
    np.testing.assert_allclose(table["period"], [2 * math.pi * 10000 ** (2 * j / 64) for j in (0, 5, 31)])


@pytest.mark.parametrize("d", [16, 64, 128])
def test_scale_norms(d):
    s = ch06_positions.scale_norms(d)
    assert s["position"] == pytest.approx(math.sqrt(d / 2), abs=1e-9)  # sin^2 + cos^2 per pair
    assert s["embedding"] == pytest.approx(1.0, abs=0.1)
    assert s["scaled"] == pytest.approx(math.sqrt(d), rel=0.1)
    assert s["cosine_unscaled"] == pytest.approx((d / 2) / (d / 2 + 1), abs=0.05)
    assert s["cosine_scaled"] == pytest.approx(1 / 3, abs=0.08)


def test_permutation_is_a_permutation():
    perm = ch06_positions.permutation(9, 4)
    assert sorted(perm) == list(range(9)) and perm == ch06_positions.permutation(9, 4)


def test_shuffling_permutes_the_outputs_unless_positions_are_added():
    tokens = ch05.SENTENCE.split()
    errors = ch06_positions.shuffle_errors(tokens, ch06_positions.permutation(len(tokens), 1))
    assert errors["without"] < 1e-6 and errors["with"] > 1e-2
    same = ch06_positions.shuffle_errors(tokens, list(range(len(tokens))))
    assert same == {"without": 0.0, "with": 0.0}


def test_equivariance_with_torch_multihead_attention():
    """The same property holds for a second implementation, nn.MultiheadAttention with the same weights."""
    tokens = "a b c d e f g".split()
    layer = ch05.build_layer(32, 4, seed=0)
    mha = nn.MultiheadAttention(32, 4, bias=False, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.W_q.weight, layer.W_k.weight, layer.W_v.weight]))
        mha.out_proj.weight.copy_(layer.W_o.weight)
    X = ch05.embed(tokens, 32)[None]  # (1, T, d)
    P = torch.from_numpy(ch06_positions.sinusoid_table(len(tokens), 32)).float()[None]  # (1, T, d)
    perm = ch06_positions.permutation(len(tokens), 2)
    f = lambda Z: mha(Z, Z, Z, need_weights=False)[0]  # noqa: E731
    with torch.no_grad():
        torch.testing.assert_close(f(X), layer(X, X, X), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(f(X[:, perm]), f(X)[:, perm], atol=1e-6, rtol=1e-5)
        moved = (f(X[:, perm] + P) - f(X + P)[:, perm]).abs().max()
    ours = ch06_positions.shuffle_errors(tokens, perm)
    assert moved > 1e-2 and ours["with"] == pytest.approx(float(moved), rel=1e-3)


def test_views_are_arrow_tables_with_translated_text():
    roles = ch06.roles_view("zh", "cross")
    assert roles["shape"] == (3, 4) and roles["queries"].column(0).to_pylist() == list(ch06.TARGET)
    assert "交叉注意力" in roles["roles"].to_pandas().iloc[:, 0].tolist()
    table, spec = ch06.cost_view("en", 100, 512, 3)
    assert table.to_pandas()["operations"].tolist()[0] == "5,120,000" and len(spec["datasets"]) == 2
    data, heat = ch06_positions.pe_heatmap("en", 20, 8)
    assert data.num_rows == 20 * 8 and heat["encoding"]["x"]["field"] == "dimension"
    view = ch06_positions.encoding_view("en", 20, 8, (0, 3))
    assert view["binary"].num_rows == 17 and view["periods"].num_rows > 0
    assert ch06_positions.encoding_view("en", 20, 8, ())["curves"] is None
    matrix, err64, err32 = ch06_positions.rotation_view(60, 32, 5, 2)
    w = 10000 ** (-4 / 32)
    np.testing.assert_allclose(matrix.to_pandas().to_numpy(), [[math.cos(5 * w), math.sin(5 * w)],
                                                              [-math.sin(5 * w), math.cos(5 * w)]], atol=1e-6)
    assert err64 < 1e-6 and err32 <= ch06_positions.FLOAT32_BOUND
    scale = ch06_positions.scale_view("en", 64).to_pandas()
    assert scale.iloc[2, 1] == pytest.approx(math.sqrt(32), abs=1e-3)


def test_latex_sci_and_curve_order():
    assert ch06_positions.latex_sci(1.4389e-7) == r"1.44 \times 10^{-7}"
    assert ch06_positions.latex_sci(25000.0, 1) == r"2.5 \times 10^{4}"
    spec = ch06_positions.columns_spec(10, 32, (20, 8, 1), "i")
    assert spec["encoding"]["color"]["sort"] == ["P[:, 1]", "P[:, 8]", "P[:, 20]"]


@pytest.mark.parametrize("d", [4, 6, 8, 128])
def test_the_default_period_rows_are_pairs_the_width_has(d):
    table = ch06_positions.period_table(d)
    pairs = table["j"].tolist()
    assert pairs == sorted(set(pairs)) and pairs[0] == 0 and pairs[-1] == (d + 1) // 2 - 1
    np.testing.assert_allclose(table["period"], [2 * math.pi * 10000 ** (2 * j / d) for j in pairs])
    with pytest.raises(ValueError, match="column pairs must be 0..1 for num_hiddens = 4"):
        ch06_positions.period_table(4, [0, 2])


def test_columns_beyond_the_width_are_set_aside_not_lost():
    assert ch06_positions.fit_columns([20, 0, 8, 1, 8], 4) == ([0, 1], [8, 20])
    assert ch06_positions.fit_columns([0, 1] + [8, 20], 32) == ([0, 1, 8, 20], [])
