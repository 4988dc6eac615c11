# style: straightforward, block mask written for per-example lengths
# bug: block_mask | only handles (B,) valid_lens (lens[:, None, None]); per-query (B, n_q) lengths broadcast into a 4-D mask and crash.
# expect: block_mask | valid_lens 2-D
"""Exercise 10: tiled attention with the online softmax (chapter 11)."""

import math

import torch


def key_blocks(num_keys, block_size=16):
    """The blocks of key indices, in order: [(start, stop), ...]."""
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    return [(start, min(start + block_size, num_keys)) for start in range(0, num_keys, block_size)]


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    """One step of the online softmax -> (m, l, acc)."""
    m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
    shift = torch.where(torch.isinf(m_new) & (m_new < 0), torch.zeros_like(m_new), m_new)
    p = torch.exp(scores - shift)
    scale = torch.exp(m - shift)
    l_new = l * scale + p.sum(dim=-1, keepdim=True)
    acc_new = acc * scale + p @ values
    return m_new, l_new, acc_new


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Boolean (B, n_q, stop - start): True where key start .. stop - 1 is below the row's valid length."""
    idx = torch.arange(start, stop, device=valid_lens.device)
    lens = valid_lens[:, None, None]
    return (idx.reshape(1, 1, -1) < lens).expand(batch, num_queries, stop - start)


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Scaled dot-product attention, one block of keys at a time -> (B, n_q, v)."""
    B, n_q, d = queries.shape
    n_k = keys.shape[1]
    v = values.shape[-1]
    m = torch.full((B, n_q, 1), float("-inf"), dtype=queries.dtype, device=queries.device)
    l = torch.zeros((B, n_q, 1), dtype=queries.dtype, device=queries.device)  # noqa: E741
    acc = torch.zeros((B, n_q, v), dtype=queries.dtype, device=queries.device)
    for start, stop in key_blocks(n_k, block_size):
        scores = queries @ keys[:, start:stop].transpose(1, 2) / math.sqrt(d)
        if valid_lens is not None:
            keep = block_mask(valid_lens, B, n_q, start, stop)
            scores = scores.masked_fill(~keep, float("-inf"))
        m, l, acc = online_softmax_update(m, l, acc, scores, values[:, start:stop])  # noqa: E741
    l_safe = torch.where(l > 0, l, torch.ones_like(l))
    return torch.where(l > 0, acc / l_safe, torch.zeros_like(acc))
