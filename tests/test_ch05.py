"""Chapter 5 maths: the shape trace, parameter counts and per-head weights of multi-head attention.

Expected values come from formulas (shapes, 4 d^2 parameters), from plain torch arithmetic on the
layer's own weight matrices, and from torch's nn.MultiheadAttention as a second implementation.
"""

import math

import numpy as np
import pytest
import torch
from torch import nn

from course.lessons import ch05


def shapes_of(rows):
    """{(tensor, step): shape text} from a trace."""
    return {(r["tensor"], r["step"]): r["shape"] for r in rows}


def test_worked_case_shapes():
    rows, diff = ch05.trace_shapes(**ch05.WORKED)
    shapes = shapes_of(rows)
    assert shapes[("queries", "input")] == "(2, 4, 100)"
    assert shapes[("keys_values", "input")] == "(2, 6, 100)"
    assert shapes[("queries", "transpose_qkv")] == "(10, 4, 20)"
    assert shapes[("keys_values", "transpose_qkv")] == "(10, 6, 20)"
    assert shapes[("weights", "attention")] == "(10, 4, 6)"
    assert shapes[("output", "W_o")] == "(2, 4, 100)"
    assert diff < 1e-6  # the step-by-step run is the layer's own forward pass


@pytest.mark.parametrize(("b", "n_q", "n_k", "h", "heads"), [(1, 1, 1, 4, 4), (3, 5, 2, 24, 3), (8, 12, 7, 128, 16)])
def test_shapes_follow_the_formulas(b, n_q, n_k, h, heads):
    rows, diff = ch05.trace_shapes(b, n_q, n_k, h, heads)
    shapes = shapes_of(rows)
    d = h // heads
    assert shapes[("queries", "transpose_qkv")] == str((b * heads, n_q, d))
    assert shapes[("keys_values", "transpose_qkv")] == str((b * heads, n_k, d))
    assert shapes[("heads", "attention")] == str((b * heads, n_q, d))
    assert shapes[("concat", "transpose_output")] == shapes[("output", "W_o")] == str((b, n_q, h))
    assert diff < 1e-5


def test_bad_head_count_raises_the_modules_message():
    with pytest.raises(ValueError, match=r"num_hiddens \(100\) must be divisible by num_heads \(3\)"):
        ch05.trace_shapes(2, 4, 6, 100, 3)
    assert ch05.valid_head_counts(100) == [1, 2, 4, 5, 10, 20, 25, 50, 100]  # the divisors of 100, by hand
    assert ch05.valid_head_counts(7) == [1, 7]


@pytest.mark.parametrize(("h", "heads"), [(100, 5), (64, 8), (12, 1)])
def test_parameters_equal_one_head_of_the_same_width(h, heads):
    table = ch05.parameter_table(h, heads).set_index("matrix")
    assert table.loc["total", "multi"] == table.loc["total", "single"] == 4 * h * h
    assert (table.loc[["W_q", "W_k", "W_v", "W_o"], "multi"] == h * h).all()


def test_count_parameters_counts_weights_and_biases():
    assert ch05.count_parameters(nn.Linear(3, 4)) == 3 * 4 + 4
    assert ch05.count_parameters(nn.Sequential(nn.Linear(2, 2, bias=False), nn.Linear(2, 5))) == 4 + 10 + 5


def manual_head_weights(layer, X, num_heads):
    """softmax(q_h k_h^T / sqrt(d_h)) for every head, from the layer's weight matrices by hand."""
    q, k = X @ layer.W_q.weight.T, X @ layer.W_k.weight.T  # (T, h)
    d = q.shape[-1] // num_heads
    out = []
    for i in range(num_heads):
        qi, ki = q[:, i * d : (i + 1) * d], k[:, i * d : (i + 1) * d]  # (T, d)
        out.append(torch.softmax(qi @ ki.T / math.sqrt(d), dim=-1))  # (T, T)
    return torch.stack(out)  # (heads, T, T)


def torch_mha(layer, num_hiddens, num_heads):
    """nn.MultiheadAttention with the reference layer's weights (no biases)."""
    mha = nn.MultiheadAttention(num_hiddens, num_heads, bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([layer.W_q.weight, layer.W_k.weight, layer.W_v.weight]))
        mha.out_proj.weight.copy_(layer.W_o.weight)
    return mha.eval()


@pytest.mark.parametrize("heads", [1, 2, 4, 8])
def test_head_weights_match_hand_computation_and_torch(heads):
    tokens = ch05.tokenize("a cat and a dog sat")
    weights = ch05.head_weights(tokens, 32, heads, scale=2.0, seed=3)
    layer = ch05.build_layer(32, heads, seed=3)
    X = ch05.embed(tokens, 32, 2.0)  # (T, h)
    with torch.no_grad():
        torch.testing.assert_close(weights, manual_head_weights(layer, X, heads), atol=1e-5, rtol=1e-5)
        _, torch_weights = torch_mha(layer, 32, heads)(X[None], X[None], X[None], average_attn_weights=False)
    torch.testing.assert_close(weights, torch_weights[0], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(heads, len(tokens)))


def test_heads_differ_and_repeated_words_share_rows():
    tokens = ch05.tokenize(ch05.SENTENCE)  # "the" at positions 0 and 4
    weights = ch05.head_weights(tokens, 32, 4, scale=2.0)
    diff = ch05.head_differences(weights).to_numpy()
    assert diff.shape == (4, 4) and (diff.diagonal() == 0).all()
    np.testing.assert_allclose(diff, diff.T)
    assert diff[0, 1] == pytest.approx(float((weights[0] - weights[1]).abs().mean()), rel=1e-5)
    off = diff[~torch.eye(4, dtype=torch.bool).numpy()]
    assert (off > 0.01).all()  # no two heads alike
    torch.testing.assert_close(weights[:, 0], weights[:, 4])


def test_embeddings_are_fixed_by_the_word():
    a = ch05.embed(["Cat", "sat", "cat"], 8)
    torch.testing.assert_close(a[0], a[2])  # case-insensitive, same word, same vector
    assert not torch.allclose(a[0], a[1])
    torch.testing.assert_close(ch05.embed(["sat"], 8, scale=3.0)[0], 3.0 * a[1])


def test_most_attended_reads_the_argmax():
    weights = torch.tensor([[[0.1, 0.9], [0.8, 0.2]], [[0.6, 0.4], [0.3, 0.7]]])  # (2 heads, 2, 2)
    table = ch05.most_attended(weights, ["x", "y"], "H{}")
    assert table["H1"].tolist() == ["y", "x"] and table["H2"].tolist() == ["x", "y"]  # numbered from 1


def test_tokenize_reports_empty_and_long_sentences():
    with pytest.raises(ch05.BadSentence, match="at least one word") as empty:
        ch05.tokenize("   ")
    assert empty.value.code == "empty"
    with pytest.raises(ch05.BadSentence, match=f"at most {ch05.MAX_TOKENS}") as long:
        ch05.tokenize("w " * (ch05.MAX_TOKENS + 1))
    assert long.value.code == "long" and long.value.count == ch05.MAX_TOKENS + 1
    assert ch05.tokenize(" the  cat ") == ["the", "cat"]


def test_views_translate_and_send_arrow():
    table, diff = ch05.tracer_view("zh", 2, 4, 6, 100, 5)
    frame = table.to_pandas()
    assert list(frame.columns) == ["张量", "步骤", "形状"] and frame["形状"].tolist()[4] == "(10, 4, 20)"
    params, total = ch05.params_view("en", 100, 5)
    assert total == 40000 and params.to_pandas().iloc[-1].tolist() == ["total", 40000, 40000]
    view = ch05.heads_view("en", ("a", "b", "a"), 32, 2, 2.0, 0, 1)
    from streamlit import dataframe_util  # decode the chart's data as Streamlit will

    data = next(iter(view["spec"]["datasets"].values()))
    shown = dataframe_util.convert_arrow_bytes_to_pandas_df(data).sort_values(["row", "col"])["value"]
    expected = ch05.head_weights(["a", "b", "a"], 32, 2, 2.0, 0)[1].flatten().numpy()
    np.testing.assert_allclose(shown.to_numpy(), expected, atol=1e-6)
    assert view["diff"].num_rows == 2 and view["top"].column_names == ["", "head 1", "head 2"]
