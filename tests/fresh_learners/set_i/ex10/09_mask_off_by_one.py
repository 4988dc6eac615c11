# style: docstring order, torch.where guards, le comparison
# bug: block_mask | keeps keys with index <= valid length (idx <= lens) instead of < valid length, so the key at position valid_len is not masked
# expect: block_mask | key at the valid length
"""Exercise 10: tiled attention with the online softmax (chapter 11,
"FlashAttention: tiling and the online softmax").

Full attention builds the (n_q, n_k) matrix of scores before its softmax.
FlashAttention (Dao et al. 2022) walks the keys one block at a time instead,
keeping per query a running max m, a running sum l of exp(score - m) and a
running weighted sum acc of the values; whenever a block raises the max, what
was summed so far is multiplied by exp(m_old - m_new). The result is exactly
softmax attention, yet only one (n_q, block) slice of the scores exists at a
time. Write the four functions below; only torch is needed.
"""

import math

import torch


def key_blocks(num_keys, block_size=16):
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    return [(start, min(start + block_size, num_keys)) for start in range(0, num_keys, block_size)]


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
    # rows that have only seen -inf so far: shift by 0 so that exp gives 0, not NaN
    shift = torch.where(torch.isneginf(m_new), torch.zeros_like(m_new), m_new)
    p = torch.exp(scores - shift)
    alpha = torch.exp(m - shift)
    l_new = l * alpha + p.sum(dim=-1, keepdim=True)
    acc_new = acc * alpha + torch.bmm(p, values)
    return m_new, l_new, acc_new


def block_mask(valid_lens, batch, num_queries, start, stop):
    idx = torch.arange(start, stop, device=valid_lens.device)
    if valid_lens.dim() == 1 and valid_lens.shape[0] == batch:
        lens = valid_lens.reshape(batch, 1, 1)
    elif valid_lens.dim() == 2 and tuple(valid_lens.shape) == (batch, num_queries):
        lens = valid_lens.reshape(batch, num_queries, 1)
    else:
        raise ValueError(
            f"valid_lens must be ({batch},) or ({batch}, {num_queries}), got {tuple(valid_lens.shape)}"
        )
    return idx.reshape(1, 1, -1).le(lens).expand(batch, num_queries, stop - start)


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    B, n_q, d = queries.shape
    n_k = keys.shape[1]
    m = torch.full((B, n_q, 1), float("-inf"), dtype=queries.dtype, device=queries.device)
    l = torch.zeros((B, n_q, 1), dtype=queries.dtype, device=queries.device)  # noqa: E741
    acc = torch.zeros((B, n_q, values.shape[-1]), dtype=queries.dtype, device=queries.device)
    scale = 1.0 / math.sqrt(d)
    for start, stop in key_blocks(n_k, block_size):
        scores = torch.bmm(queries, keys[:, start:stop].transpose(1, 2)) * scale
        if valid_lens is not None:
            keep = block_mask(valid_lens, B, n_q, start, stop)
            scores = scores.masked_fill(~keep, float("-inf"))
        m, l, acc = online_softmax_update(m, l, acc, scores, values[:, start:stop])  # noqa: E741
    return acc / torch.where(l > 0, l, torch.ones_like(l))
