"""Chapter 7 logic: block sizes, LayerNorm vs BatchNorm, the three masks, incremental decoding.

Expected values are computed here independently: parameter counts from the layer shapes, the
normalisations from their formulas in numpy, the masks from explicit loops over (query, key).
"""

import numpy as np
import pytest
import torch

from course.lessons import ch07
from solutions.ex07_transformer import TransformerDecoderBlock


def ffn_params(d, f):
    return d * f + f + f * d + d  # two Linear layers with biases


@pytest.mark.parametrize(("d", "f"), [(32, 64), (512, 2048)])
def test_block_parameters_match_the_layer_shapes_and_ignore_the_head_count(d, f):
    counts = ch07.block_parameters(d, f, 8)
    add_norm = 2 * d  # LayerNorm's gamma and beta
    assert counts["ffn"] == ffn_params(d, f)
    assert counts["add_norm"] == add_norm
    assert counts["encoder"] == 4 * d * d + ffn_params(d, f) + 2 * add_norm  # W_q, W_k, W_v, W_o without bias
    assert counts["decoder"] == 8 * d * d + ffn_params(d, f) + 3 * add_norm
    assert ch07.block_parameters(d, f, 1) == counts


def test_ffn_is_position_wise():
    assert ch07.ffn_positionwise_gap() < 1e-6


def test_norm_inputs_scale_only_the_last_feature():
    base, scaled = ch07.norm_inputs(5, 1.0, seed=3), ch07.norm_inputs(5, 7.5, seed=3)
    torch.testing.assert_close(scaled[:, :-1], base[:, :-1])
    torch.testing.assert_close(scaled[:, -1], 7.5 * base[:, -1])
    assert not torch.equal(base, ch07.norm_inputs(5, 1.0, seed=4))


@pytest.mark.parametrize(("batch", "scale"), [(2, 1.0), (6, 30.0)])
def test_layer_and_batch_norm_follow_their_formulas(batch, scale):
    X = ch07.norm_inputs(batch, scale).numpy().astype(np.float64)
    eps = 1e-5
    rows = (X - X.mean(axis=1, keepdims=True)) / np.sqrt(X.var(axis=1, keepdims=True) + eps)
    cols = (X - X.mean(axis=0, keepdims=True)) / np.sqrt(X.var(axis=0, keepdims=True) + eps)
    np.testing.assert_allclose(ch07.layer_norm(torch.tensor(X, dtype=torch.float32)).numpy(), rows, atol=1e-5)
    np.testing.assert_allclose(ch07.batch_norm(torch.tensor(X, dtype=torch.float32)).numpy(), cols, atol=1e-4)


def test_batch_norm_needs_two_examples():
    assert ch07.batch_norm(ch07.norm_inputs(1, 1.0)) is None
    assert ch07.layer_norm(ch07.norm_inputs(1, 1.0)).shape == (1, ch07.NUM_FEATURES)


def test_margins_show_row_and_column_statistics():
    X = torch.tensor([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 4.0, 4.0]])
    table = ch07.with_margins(X)
    assert table.loc["x0", "μ (row)"] == 3.0 and table.loc["x1", "μ (row)"] == 2.0
    assert table.loc["x0", "σ (row)"] == round(float(np.std([1, 2, 3, 6])), 3)
    assert table.loc["μ (column)", "f2"] == 3.5 and table.loc["σ (column)", "f0"] == 0.5
    assert table.loc["x1", "f3"] == 4.0


def test_only_batch_norm_depends_on_the_other_examples():
    moved = ch07.batch_dependence(4, 5.0)
    assert moved["layer"] == 0.0
    assert moved["batch"] > 0.01
    assert "batch" not in ch07.batch_dependence(1, 5.0)


@pytest.mark.parametrize(("src_len", "valid", "tgt_len"), [(6, 4, 5), (3, 3, 1), (10, 1, 10)])
def test_masks_match_explicit_loops(src_len, valid, tgt_len):
    masks = ch07.attention_masks(src_len, valid, tgt_len)
    expected = {
        "enc_self": [[1.0 / valid if j < valid else 0.0 for j in range(src_len)] for _ in range(src_len)],
        "dec_self": [[1.0 / (i + 1) if j <= i else 0.0 for j in range(tgt_len)] for i in range(tgt_len)],
        "cross": [[1.0 / valid if j < valid else 0.0 for j in range(src_len)] for _ in range(tgt_len)],
    }
    for use in ch07.MASK_USES:
        np.testing.assert_allclose(masks[use].numpy(), np.array(expected[use]), atol=1e-7)


def test_causal_lengths_are_what_the_reference_decoder_uses():
    torch.manual_seed(0)
    block = TransformerDecoderBlock(8, 16, 2, 0.0, 0).eval()
    enc, enc_lens = torch.randn(2, 4, 8), torch.tensor([4, 2])  # (B, T_src, d), (B,)
    state = [enc, enc_lens, [None]]
    with torch.no_grad():
        block(torch.randn(2, 3, 8), state)  # three positions first
        block(torch.randn(2, 2, 8), state)  # then two more at once
    seen = block.attention1.attention_weights > 0  # (B, heads, 2, 5)
    lens = ch07.causal_valid_lens(2, 2, num_earlier=3)  # (B, 2)
    assert lens.tolist() == [[4, 5], [4, 5]]
    allowed = torch.arange(5)[None, None, :] < lens[:, :, None]  # (B, 2, 5)
    assert torch.equal(seen, allowed[:, None].expand_as(seen))


@pytest.mark.parametrize("steps", [1, 7])
def test_incremental_decoding_equals_the_parallel_pass(steps):
    table = ch07.incremental_check(steps, seed=2)
    assert table["t"].tolist() == list(range(steps))
    assert table["cache"].tolist() == list(range(1, steps + 1))  # one more cached position per step
    assert (table["input"] == "(2, 1, 16)").all()
    assert table["max |Δ|"].max() < 1e-5


def test_transformer_diagram_has_both_stacks_and_the_residuals():
    labels = {name: f"<{name}>" for name in (
        "src", "tgt", "out", "src_emb", "tgt_emb", "enc_attn", "dec_self", "dec_cross", "linear",
        "enc_ffn", "dec_ffn", "add_norm", "encoder", "decoder")}
    labels["stack"] = 'N = {n} "x"'
    dot = ch07.transformer_dot(labels, 3)
    assert dot.count("{") == dot.count("}") and dot.startswith("digraph")
    assert dot.count("style=dashed") == 5  # two residuals per encoder block, three per decoder block
    assert dot.count('"<add_norm>"') == 5
    assert 'N = 3 \\"x\\"' in dot  # quotes in a label are escaped
    assert "enc_an2 -> dec_cross" in dot
