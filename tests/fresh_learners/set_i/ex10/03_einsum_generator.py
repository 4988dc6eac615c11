# style: einsum, key_blocks through range/zip, short variable names, guards via nan-free clamp
# bug: none
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
        raise ValueError(f"block_size={block_size}: need at least one key per block")
    starts = list(range(0, num_keys, block_size))
    stops = starts[1:] + [num_keys]
    return list(zip(starts, stops))


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    mx = torch.maximum(m, scores.amax(-1, keepdim=True))
    finite = torch.isfinite(mx)
    base = torch.where(finite, mx, torch.zeros_like(mx))
    p = torch.exp(scores - base)
    r = torch.exp(m - base)
    return mx, r * l + p.sum(-1, keepdim=True), r * acc + torch.einsum("bqk,bkv->bqv", p, values)


def block_mask(valid_lens, batch, num_queries, start, stop):
    pos = torch.arange(start, stop, device=valid_lens.device)
    if valid_lens.ndim == 1:
        if valid_lens.numel() != batch:
            raise ValueError("valid_lens (B,) does not match the batch")
        return (pos[None, :] < valid_lens[:, None]).unsqueeze(1).expand(-1, num_queries, -1)
    if valid_lens.ndim == 2:
        if valid_lens.shape[0] != batch or valid_lens.shape[1] != num_queries:
            raise ValueError("valid_lens (B, n_q) does not match the batch and queries")
        return pos[None, None, :] < valid_lens[..., None]
    raise ValueError(f"valid_lens must be 1-D or 2-D, got {valid_lens.ndim}-D")


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    B, nq, d = queries.shape
    q = queries / math.sqrt(d)
    m = queries.new_full((B, nq, 1), float("-inf"))
    l = queries.new_zeros((B, nq, 1))  # noqa: E741
    acc = queries.new_zeros((B, nq, values.shape[-1]))
    for a, b in key_blocks(keys.shape[1], block_size):
        s = torch.einsum("bqd,bkd->bqk", q, keys[:, a:b])
        if valid_lens is not None:
            s = torch.where(block_mask(valid_lens, B, nq, a, b), s, torch.full_like(s, float("-inf")))
        m, l, acc = online_softmax_update(m, l, acc, s, values[:, a:b])  # noqa: E741
    return acc / l.clamp_min(torch.finfo(l.dtype).tiny) * (l > 0)
