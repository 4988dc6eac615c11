"""The reference solutions against independent oracles: PyTorch's own
implementations, brute force and hand-computed values."""

import itertools
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from solutions.ex00_paths import max_path_length, receptive_field
from solutions.ex01_softmax import masked_softmax, softmax
from solutions.ex02_nadaraya_watson import NWKernelRegression, gaussian_kernel_weights, nadaraya_watson
from solutions.ex03_scoring import AdditiveAttention, DotProductAttention
from solutions.ex04_bahdanau import Seq2SeqAttentionDecoder
from solutions.ex05_multihead import MultiHeadAttention, transpose_output, transpose_qkv
from solutions.ex06_positional_encoding import PositionalEncoding
from solutions.ex07_transformer import TransformerDecoderBlock, TransformerEncoderBlock
from solutions.ex08_structured_masks import (MaskedDotProductAttention, graph_mask, sliding_window_mask,
                                             softmax_with_mask)
from solutions.ex09_rotary import RotaryDotProductAttention, RotaryEmbedding
from solutions.ex10_tiled_attention import block_mask, key_blocks, online_softmax_update, tiled_attention
from solutions.ex11_grouped_kv_cache import GroupedQueryAttention, repeat_kv


# ---- ex00: brute force on the convolution graph ---------------------------------------------


def reach(kernel_size, dilations):
    """Input offsets that reach one output, by composing layer by layer."""
    offsets = {0}
    for d in dilations:
        taps = [(j - (kernel_size - 1) // 2) * d for j in range(kernel_size)]
        offsets = {o + t for o in offsets for t in taps}
    return offsets


@pytest.mark.parametrize("k,dilations", [(3, [1, 1, 1, 1]), (2, [1, 2, 4]), (5, [1]), (3, [1, 2, 4, 8]), (4, [])])
def test_receptive_field_counts_reachable_inputs(k, dilations):
    assert receptive_field(k, len(dilations), dilations) == len(reach(k, dilations))


def test_receptive_field_worked_case_and_errors():
    assert receptive_field(3, 4) == 9
    with pytest.raises(ValueError):
        receptive_field(3, 2, [1])
    with pytest.raises(ValueError):
        receptive_field(0, 1)


@pytest.mark.parametrize("n,k,dilated", itertools.product([1, 2, 5, 9, 10, 33], [2, 3, 5], [False, True]))
def test_cnn_path_is_fewest_layers_covering_n(n, k, dilated):
    layers = 0
    while len(reach(k, [2**i if dilated else 1 for i in range(layers)])) < n:
        layers += 1
    assert max_path_length("cnn", n, kernel_size=k, dilated=dilated) == layers


def test_rnn_and_attention_paths_and_errors():
    assert [max_path_length("rnn", n) for n in (1, 2, 10)] == [0, 1, 9]
    assert [max_path_length("self-attention", n) for n in (1, 2, 10)] == [0, 1, 1]
    for bad in (("lstm", 3), ("rnn", 0)):
        with pytest.raises(ValueError):
            max_path_length(*bad)
    with pytest.raises(ValueError):
        max_path_length("cnn", 4, kernel_size=1)


# ---- ex01: torch.softmax is the oracle ---------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_matches_torch(dtype, dim):
    X = torch.randn(3, 4, 5, dtype=dtype) * 5
    torch.testing.assert_close(softmax(X, dim), torch.softmax(X, dim))


def test_softmax_huge_logits_and_minus_inf():
    X = torch.tensor([[1e4, 1e4 - 1.0, -1e4], [0.0, float("-inf"), 1.0]])
    torch.testing.assert_close(softmax(X), torch.softmax(X.double(), -1).float())
    assert softmax(X)[1, 1] == 0
    assert torch.equal(softmax(torch.full((2, 3), float("-inf"))), torch.zeros(2, 3))


def mask_from_lens(valid_lens, B, n_q, n_k):
    lens = valid_lens[:, None].expand(B, n_q) if valid_lens.dim() == 1 else valid_lens
    return torch.arange(n_k)[None, None, :] < lens[:, :, None]


@pytest.mark.parametrize("valid_lens", [torch.tensor([2, 5, 1]), torch.tensor([[1, 5], [3, 2], [4, 4]])])
def test_masked_softmax_matches_torch_with_a_minus_inf_mask(valid_lens):
    X = torch.randn(3, 2, 5)
    mask = mask_from_lens(valid_lens, 3, 2, 5)
    expected = torch.softmax(X.masked_fill(~mask, float("-inf")), dim=-1)
    torch.testing.assert_close(masked_softmax(X, valid_lens), expected)
    assert torch.all(masked_softmax(X, valid_lens)[~mask] == 0)


def test_masked_softmax_empty_rows_are_zero_with_finite_gradients():
    X = torch.randn(2, 2, 3, dtype=torch.float64, requires_grad=True)
    X_before = X.detach().clone()
    W = masked_softmax(X, torch.tensor([0, 2]))
    assert torch.equal(W[0], torch.zeros(2, 3, dtype=torch.float64))
    (W * torch.randn_like(W)).sum().backward()
    assert torch.isfinite(X.grad).all()
    assert torch.equal(X.detach(), X_before)
    assert masked_softmax(X.float(), None).dtype == torch.float32


def test_masked_softmax_rejects_bad_valid_lens_shape():
    with pytest.raises(ValueError, match=r"valid_lens must have shape \(B,\) = \(2,\)"):
        masked_softmax(torch.zeros(2, 3, 4), torch.tensor([1, 2, 3]))


# ---- ex02: explicit sums ---------------------------------------------------------------------


def test_nadaraya_watson_by_hand():
    queries, keys, values = torch.tensor([0.0, 1.0]), torch.tensor([0.0, 1.0, 3.0]), torch.tensor([1.0, 2.0, 4.0])
    w = 1.5
    for i, q in enumerate(queries.tolist()):
        kernel = [math.exp(-(((q - k) * w) ** 2) / 2) for k in keys.tolist()]
        expected = [c / sum(kernel) for c in kernel]
        torch.testing.assert_close(gaussian_kernel_weights(queries, keys, w)[i], torch.tensor(expected))
        assert nadaraya_watson(queries, keys, values, w)[i].item() == pytest.approx(
            sum(a * v for a, v in zip(expected, values.tolist())), rel=1e-6)


def test_nw_module_uses_its_parameter_and_bmm_shapes():
    model = NWKernelRegression()
    with torch.no_grad():
        model.w.fill_(0.8)
    queries, keys, values = torch.randn(4), torch.randn(4, 6), torch.randn(4, 6)
    out = model(queries, keys, values)
    assert out.shape == (4,) and model.attention_weights.shape == (4, 6)
    torch.testing.assert_close(out, nadaraya_watson(queries, keys, values, 0.8))
    out.sum().backward()
    assert model.w.grad is not None and model.w.grad.shape == (1,)


# ---- ex03: scaled_dot_product_attention and explicit loops -----------------------------------


@pytest.mark.parametrize("valid_lens", [None, torch.tensor([3, 6]), torch.tensor([[1, 2, 6, 4], [5, 3, 2, 1]])])
def test_dot_product_attention_matches_sdpa(valid_lens):
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 5)
    attention = DotProductAttention(dropout=0.5).eval()
    mask = None if valid_lens is None else mask_from_lens(valid_lens, 2, 4, 6)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(attention(q, k, v, valid_lens), expected)


def test_additive_attention_matches_explicit_loops():
    torch.manual_seed(0)
    attention = AdditiveAttention(key_size=3, query_size=2, num_hiddens=4, dropout=0.0).eval()
    q, k, v = torch.randn(2, 2, 2), torch.randn(2, 3, 3), torch.randn(2, 3, 5)
    lens = torch.tensor([2, 3])
    out = attention(q, k, v, lens)
    for b in range(2):
        for i in range(2):
            scores = [attention.w_v(torch.tanh(attention.W_q(q[b, i]) + attention.W_k(k[b, j]))).item()
                      for j in range(int(lens[b]))]
            weights = torch.softmax(torch.tensor(scores), 0)
            torch.testing.assert_close(out[b, i], (weights[:, None] * v[b, : int(lens[b])]).sum(0))


# ---- ex05: nn.MultiheadAttention with the same weights ----------------------------------------


@pytest.mark.parametrize("bias", [False, True])
def test_multihead_matches_torch(bias):
    torch.manual_seed(1)
    H, heads = 12, 3
    ours = MultiHeadAttention(H, H, H, H, heads, dropout=0.0, bias=bias).eval()
    theirs = nn.MultiheadAttention(H, heads, bias=bias, batch_first=True).eval()
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        if bias:
            theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
            theirs.out_proj.bias.copy_(ours.W_o.bias)
    q, kv = torch.randn(2, 4, H), torch.randn(2, 6, H)
    lens = torch.tensor([6, 3])
    expected, weights = theirs(q, kv, kv, key_padding_mask=~mask_from_lens(lens, 2, 1, 6)[:, 0],
                               average_attn_weights=False)
    torch.testing.assert_close(ours(q, kv, kv, lens), expected, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(ours.attention_weights, weights, rtol=1e-5, atol=1e-6)


def test_transpose_qkv_layout_and_inverse():
    X = torch.arange(2 * 3 * 8.0).reshape(2, 3, 8)
    split = transpose_qkv(X, 4)  # (8, 3, 2)
    assert split.shape == (8, 3, 2)
    for b, h in itertools.product(range(2), range(4)):
        assert torch.equal(split[b * 4 + h], X[b, :, h * 2 : (h + 1) * 2])
    assert torch.equal(transpose_output(split, 4), X)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(8, 8, 8, 10, 3, 0.0)


# ---- ex06: the formula, element by element ----------------------------------------------------


@pytest.mark.parametrize("d", [6, 7])
def test_positional_table_follows_the_formula(d):
    P = PositionalEncoding(d, 0.0, max_len=40).P
    assert P.shape == (1, 40, d)
    for i, col in itertools.product(range(40), range(d)):
        angle = i / 10000 ** ((col - col % 2) / d)
        expected = math.sin(angle) if col % 2 == 0 else math.cos(angle)
        assert P[0, i, col].item() == pytest.approx(expected, abs=1e-6)
    assert "P" not in PositionalEncoding(d, 0.0).state_dict()
    with pytest.raises(ValueError, match="max_len"):
        PositionalEncoding(d, 0.0, max_len=4)(torch.zeros(1, 5, d))


# ---- ex04 and ex07: properties that hold for any correct implementation ------------------------


def test_bahdanau_decoder_steps_match_a_manual_loop():
    torch.manual_seed(2)
    dec = Seq2SeqAttentionDecoder(vocab_size=9, embed_size=4, num_hiddens=5, num_layers=2).eval()
    enc_out, hidden, lens = torch.randn(2, 6, 5), torch.randn(2, 2, 5), torch.tensor([6, 3])
    X = torch.randint(0, 9, (2, 4))
    logits, (_, final, _) = dec(X, dec.init_state((enc_out, hidden), lens))
    h = hidden
    for t in range(4):
        emb = dec.embedding(X[:, t : t + 1])  # (B, 1, E)
        context = dec.attention(h[-1][:, None], enc_out, enc_out, lens)  # (B, 1, H)
        out, h = dec.rnn(torch.cat([context, emb], -1), h)  # (B, 1, H)
        # Deep output: the prediction reads the GRU output, the context and the input embedding.
        expected = dec.dense(torch.tanh(dec.deep_output(torch.cat([out, context, emb], -1))))  # (B, 1, V)
        torch.testing.assert_close(logits[:, t], expected[:, 0])
    torch.testing.assert_close(final, h)
    assert dec.attention_weights.shape == (2, 4, 6)
    assert torch.all(dec.attention_weights[1, :, 3:] == 0)


def test_encoder_block_ignores_padding_content():
    block = TransformerEncoderBlock(8, 16, 2, 0.0).eval()
    X = torch.randn(1, 5, 8)
    X2 = X.clone()
    X2[:, 3:] = torch.randn(1, 2, 8)
    lens = torch.tensor([3])
    torch.testing.assert_close(block(X, lens)[:, :3], block(X2, lens)[:, :3])


def test_decoder_block_is_causal_and_incremental_in_train_and_eval():
    torch.manual_seed(3)
    blocks = [TransformerDecoderBlock(8, 16, 2, 0.0, i) for i in range(2)]
    X, enc, lens = torch.randn(2, 5, 8), torch.randn(2, 4, 8), torch.tensor([4, 2])

    def run(inputs):
        state = [enc, lens, [None, None]]
        for blk in blocks:
            inputs, state = blk(inputs, state)
        return inputs, state

    for training in (True, False):
        for blk in blocks:
            blk.train(training)
        full, state = run(X)
        assert state[2][0].shape == (2, 5, 8)
        changed = X.clone()
        changed[:, 3:] += 1.0
        torch.testing.assert_close(run(changed)[0][:, :3], full[:, :3])
    state = [enc, lens, [None, None]]
    steps = []
    for t in range(5):
        Y = X[:, t : t + 1]
        for blk in blocks:
            Y, state = blk(Y, state)
        steps.append(Y)
    torch.testing.assert_close(torch.cat(steps, 1), full, rtol=1e-5, atol=1e-6)


# ---- ex08: brute force masks, torch's attention with a boolean mask ------------------------------


@pytest.mark.parametrize("n_q,n_k,D,causal", [(5, 5, 1, False), (4, 7, 2, False), (6, 6, 0, True), (6, 3, 2, True)])
def test_sliding_window_mask_by_brute_force(n_q, n_k, D, causal):
    mask = sliding_window_mask(n_q, n_k, D, causal)
    assert mask.dtype == torch.bool and mask.shape == (n_q, n_k)
    for i, j in itertools.product(range(n_q), range(n_k)):
        assert bool(mask[i, j]) == (abs(i - j) <= D and (j <= i or not causal)), (i, j)
    assert int(sliding_window_mask(9, 9, 2)[4].sum()) == 5  # 2D + 1 keys away from the edges
    with pytest.raises(ValueError):
        sliding_window_mask(3, 3, -1)


def test_graph_mask_reads_rows_as_queries():
    A = torch.tensor([[0, 1, 0], [0, 0, 1], [0, 0, 0]])  # edges 0 -> 1 -> 2
    assert graph_mask(A, self_loops=False).tolist() == [[False, True, False], [False, False, True], [False] * 3]
    assert graph_mask(A).tolist() == [[True, True, False], [False, True, True], [False, False, True]]
    assert graph_mask(torch.zeros(2, 3, 3)).shape == (2, 3, 3)
    with pytest.raises(ValueError):
        graph_mask(torch.zeros(3, 4))


def test_masked_attention_matches_sdpa_and_empty_rows_are_zero():
    q, k, v = torch.randn(2, 5, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    mask = torch.rand(2, 5, 6) < 0.5
    mask[:, :, 0] = True  # every row sees a key: sdpa gives NaN for a row that sees none
    attention = MaskedDotProductAttention(0.5).eval()
    torch.testing.assert_close(attention(q, k, v, mask), F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
    assert torch.all(attention.attention_weights[~mask] == 0)
    mask[1, 2] = False
    X = torch.randn(2, 5, 6, requires_grad=True)
    weights = softmax_with_mask(X, mask)
    assert torch.equal(weights[1, 2], torch.zeros(6))
    weights.sum().backward()
    assert torch.isfinite(X.grad).all()


# ---- ex09: complex multiplication, relative offsets ----------------------------------------------


def test_rotary_is_multiplication_by_unit_complex_numbers():
    d, T = 8, 7
    X = torch.randn(2, T, d, dtype=torch.float64)
    rotated = RotaryEmbedding(d).double()(X, offset=3)
    z = torch.complex(X[..., 0::2], X[..., 1::2])  # pair j as x_2j + i x_2j+1
    omega = torch.tensor([10000 ** (-2 * j / d) for j in range(d // 2)], dtype=torch.float64)
    angle = torch.arange(3, 3 + T, dtype=torch.float64)[:, None] * omega  # (T, d/2)
    expected = z * torch.polar(torch.ones_like(angle), angle)
    torch.testing.assert_close(rotated[..., 0::2], expected.real, rtol=1e-5, atol=1e-6)  # float32 tables
    torch.testing.assert_close(rotated[..., 1::2], expected.imag, rtol=1e-5, atol=1e-6)


def test_rotary_scores_depend_on_the_offset_only():
    rope = RotaryEmbedding(16).double()
    q, k = torch.randn(1, 1, 16, dtype=torch.float64), torch.randn(1, 1, 16, dtype=torch.float64)
    for offset in (1, 4):
        scores = [float((rope(q, offset=m) * rope(k, offset=m + offset)).sum()) for m in (0, 5, 40)]
        assert max(scores) - min(scores) < 1e-5, scores
    assert float((rope(q, offset=0) * rope(k, offset=3)).sum()) != pytest.approx(float((q * k).sum()))
    with pytest.raises(ValueError):
        RotaryEmbedding(7)
    with pytest.raises(ValueError):
        rope(torch.zeros(1, 3, 16), offset=998)


def test_rotary_attention_is_dot_product_attention_on_rotated_inputs():
    attention = RotaryDotProductAttention(8, 0.5).eval()
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    lens = torch.tensor([6, 2])
    mask = mask_from_lens(lens, 2, 4, 6)
    expected = F.scaled_dot_product_attention(attention.rotary(q), attention.rotary(k), v, attn_mask=mask)
    torch.testing.assert_close(attention(q, k, v, lens), expected)


# ---- ex10: exercise 3's DotProductAttention, brute-force blocks, one update by hand --------------------------


def test_tiled_attention_equals_dot_product_attention_on_every_check_forward_and_backward():
    """Every published tiled_attention case of grader/checks/ex10.py: the reference the grader compares with equals
    exercise 3's DotProductAttention (no dropout), values and gradients, within a float64-tight bound."""
    from grader.checks import ex10 as checks10

    cases = [c for c in checks10.build() if c.spec.get("fn") == "tiled_attention" and not c.spec.get("expect_error")]
    assert len(cases) >= 8 and any(c.procedure == "call_measuring_tensors" for c in cases)
    for check in cases:
        queries, keys, values, *rest = check.spec["args"]
        block = rest[0] if rest else 16  # the published default
        lens = check.spec["kwargs"]["valid_lens"]
        if not keys.shape[1]:  # no key at all (DotProductAttention's softmax refuses it): every row reads nothing
            assert torch.equal(tiled_attention(queries, keys, values, block, lens),
                               torch.zeros(queries.shape[0], queries.shape[1], values.shape[-1], dtype=queries.dtype))
            continue
        grads = []
        for fn in (lambda q, k, v: tiled_attention(q, k, v, block, lens),
                   lambda q, k, v: DotProductAttention(0.0)(q, k, v, lens)):
            q, k, v = (x.double().clone().requires_grad_(True) for x in (queries, keys, values))
            out = fn(q, k, v)
            out.backward(torch.linspace(-1, 1, out.numel(), dtype=torch.float64).reshape(out.shape))
            grads.append([out.detach(), q.grad, k.grad, v.grad])
        for got, want in zip(*grads):
            assert torch.isfinite(got).all(), check.id
            torch.testing.assert_close(got, want, rtol=1e-10, atol=1e-12, msg=check.id)


def test_key_blocks_cover_every_key_once_in_order():
    for n, b in itertools.product(range(0, 30), range(1, 12)):
        blocks = key_blocks(n, b)
        assert [i for start, stop in blocks for i in range(start, stop)] == list(range(n))
        assert all(stop - start == b for start, stop in blocks[:-1]) and all(0 < stop - start <= b for start, stop in blocks)
    assert key_blocks(10, 4) == [(0, 4), (4, 8), (8, 10)] and key_blocks(40) == [(0, 16), (16, 32), (32, 40)]
    with pytest.raises(ValueError):
        key_blocks(5, 0)


def test_block_mask_is_a_slice_of_the_full_length_mask():
    lens = torch.tensor([[0, 5, 9], [6, 2, 4]])
    full = torch.arange(12)[None, None, :] < lens[:, :, None]  # (2, 3, 12)
    assert torch.equal(block_mask(lens, 2, 3, 4, 9), full[:, :, 4:9])
    assert torch.equal(block_mask(torch.tensor([3, 7]), 2, 3, 4, 8), full[:, :, 4:8].clone().copy_(
        torch.arange(4, 8)[None, None, :] < torch.tensor([3, 7])[:, None, None]))
    with pytest.raises(ValueError):
        block_mask(torch.tensor([1, 2, 3]), 2, 3, 0, 4)


def test_one_update_by_hand():
    """m = 1, l = 2, acc = [4]; a block [3, -inf] with values [[10], [99]]: the max grows to 3, the old sums shrink by
    e^-2, the masked key adds nothing."""
    f64 = {"dtype": torch.float64}
    m, total, acc = online_softmax_update(torch.tensor([[[1.0]]], **f64), torch.tensor([[[2.0]]], **f64),
                                          torch.tensor([[[4.0]]], **f64), torch.tensor([[[3.0, -math.inf]]], **f64),
                                          torch.tensor([[[10.0], [99.0]]], **f64))
    assert m.item() == 3.0
    assert total.item() == pytest.approx(2 * math.exp(-2) + 1, rel=1e-15)
    assert acc.item() == pytest.approx(4 * math.exp(-2) + 10, rel=1e-15)
    m, total, acc = online_softmax_update(torch.full((1, 1, 1), -math.inf), torch.zeros(1, 1, 1), torch.zeros(1, 1, 2),
                                          torch.full((1, 1, 3), -math.inf), torch.ones(1, 3, 2))
    assert m.item() == -math.inf and total.item() == 0 and torch.equal(acc, torch.zeros(1, 1, 2))  # not NaN
# ---- ex11: grouped key/value heads and a cached decoding step -----------------------------------


def _gqa_by_sdpa(gqa, queries, keys, values, mask):
    """torch's own grouped-query attention (scaled_dot_product_attention with enable_gqa, which gives query head h
    the key/value head h // (heads / kv_heads)) on the module's projections -> (B, n_q, num_hiddens)."""
    B, n_q, H = queries.shape
    d = gqa.d_head
    q = gqa.W_q(queries).reshape(B, n_q, -1, d).transpose(1, 2)
    k = gqa.W_k(keys).reshape(B, keys.shape[1], -1, d).transpose(1, 2)
    v = gqa.W_v(values).reshape(B, keys.shape[1], -1, d).transpose(1, 2)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)  # (B, heads, n_q, d)
    return gqa.W_o(out.transpose(1, 2).reshape(B, n_q, H))


@pytest.mark.parametrize("heads,kv_heads", [(6, 2), (6, 3), (4, 1), (4, 4)])
def test_grouped_query_attention_matches_torchs_grouped_attention(heads, kv_heads):
    torch.manual_seed(2)
    gqa = GroupedQueryAttention(2 * heads, heads, kv_heads, dropout=0.0, bias=True).eval()
    assert gqa.W_k.weight.shape == (2 * kv_heads, 2 * heads)  # keys and values: kv_heads heads of d_head = 2
    q, kv = torch.randn(2, 3, 2 * heads), torch.randn(2, 5, 2 * heads)
    lens = torch.tensor([5, 2])
    lens_mask = mask_from_lens(lens, 2, 3, 5)[:, None]  # (B, 1, n_q, n_k)
    torch.testing.assert_close(gqa(q, kv, kv, lens), _gqa_by_sdpa(gqa, q, kv, kv, lens_mask))
    causal = torch.ones(3, 5, dtype=torch.bool).tril(2)  # the 3 queries are the last of 5 positions
    torch.testing.assert_close(gqa(q, kv, kv, lens, causal=True), _gqa_by_sdpa(gqa, q, kv, kv, lens_mask & causal))


def test_repeat_kv_gives_query_head_h_the_kv_head_h_over_the_group_size():
    X = torch.arange(2 * 3 * 1 * 1.0).reshape(2, 3, 1, 1)  # example b, head j holds 3b + j
    assert repeat_kv(X, 2)[0, :, 0, 0].tolist() == [0, 0, 1, 1, 2, 2]
    assert repeat_kv(X, 2)[1, :, 0, 0].tolist() == [3, 3, 4, 4, 5, 5]
    assert torch.equal(repeat_kv(X, 1), X)


def test_grouped_query_attention_with_a_kv_head_per_head_is_multi_head_attention():
    torch.manual_seed(3)
    gqa = GroupedQueryAttention(12, 4, 4, dropout=0.0).eval()
    mha = MultiHeadAttention(12, 12, 12, 12, 4, dropout=0.0).eval()
    mha.load_state_dict(gqa.state_dict())  # the same four weight matrices, by name and shape
    q, kv = torch.randn(3, 4, 12), torch.randn(3, 6, 12)
    lens = torch.tensor([6, 1, 4])
    torch.testing.assert_close(gqa(q, kv, kv, lens), mha(q, kv, kv, lens))
    torch.testing.assert_close(gqa.attention_weights, mha.attention_weights)


@pytest.mark.parametrize("chunks", [(1, 1, 1, 1, 1), (3, 1, 1), (5,)])
def test_cached_steps_equal_the_parallel_causal_pass(chunks):
    torch.manual_seed(4)
    gqa = GroupedQueryAttention(12, 6, 2).double().eval()
    X = torch.randn(2, 5, 12, dtype=torch.float64)
    cache, outputs, seen = None, [], 0
    for n in chunks:
        before = None if cache is None else [c.clone() for c in cache]
        out, cache = gqa.step(X[:, seen:seen + n], cache)
        seen += n
        assert cache[0].shape == cache[1].shape == (2, 2, seen, 2)  # (B, kv_heads, positions so far, d_head)
        if before is not None:
            assert torch.equal(cache[0][:, :, :seen - n], before[0])  # the cache given is kept, then extended
        outputs.append(out)
    torch.testing.assert_close(torch.cat(outputs, 1), gqa(X, X, X, causal=True))
    torch.testing.assert_close(cache[0], gqa.W_k(X).reshape(2, 5, 2, 2).transpose(1, 2))  # projected, not inputs


def test_grouped_query_attention_refuses_sizes_that_do_not_divide():
    with pytest.raises(ValueError, match="num_kv_heads"):
        GroupedQueryAttention(12, 6, 4)
    with pytest.raises(ValueError, match="num_heads"):
        GroupedQueryAttention(10, 4, 2)
