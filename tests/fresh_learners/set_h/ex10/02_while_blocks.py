# style: while-loop block list, masked_fill guards, bmm
# bug: none
"""Exercise 10: tiled attention with the online softmax (chapter 11)."""

import math

import torch


def key_blocks(num_keys, block_size=16):
    """The blocks of key indices, in order: [(start, stop), ...]."""
    if block_size < 1:
        raise ValueError("block_size < 1")
    blocks = []
    start = 0
    while start < num_keys:
        stop = start + block_size
        if stop > num_keys:
            stop = num_keys
        blocks.append((start, stop))
        start = stop
    return blocks


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    """One step of the online softmax -> (m, l, acc)."""
    block_max = scores.max(dim=-1, keepdim=True).values
    m_new = torch.maximum(m, block_max)
    dead = m_new == float("-inf")
    safe = m_new.masked_fill(dead, 0.0)
    correction = (m - safe).exp()
    p = (scores - safe).exp()
    l_new = correction * l + p.sum(-1, keepdim=True)
    acc_new = correction * acc + torch.bmm(p, values)
    return m_new, l_new, acc_new


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Boolean (B, n_q, stop - start)."""
    keys_here = torch.arange(start, stop, device=valid_lens.device)
    if valid_lens.ndim == 1:
        per_row = valid_lens[:, None].expand(batch, num_queries)
    elif valid_lens.ndim == 2:
        per_row = valid_lens
    else:
        raise ValueError("valid_lens must be 1-D (B,) or 2-D (B, n_q)")
    if tuple(per_row.shape) != (batch, num_queries):
        raise ValueError(f"valid_lens has shape {tuple(valid_lens.shape)}")
    return keys_here[None, None, :] < per_row[:, :, None]


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Scaled dot-product attention, one block of keys at a time -> (B, n_q, v)."""
    batch, n_q, d = queries.shape
    scale = 1.0 / math.sqrt(d)
    opts = dict(dtype=queries.dtype, device=queries.device)
    m = torch.full((batch, n_q, 1), -math.inf, **opts)
    l = torch.zeros(batch, n_q, 1, **opts)  # noqa: E741
    acc = torch.zeros(batch, n_q, values.shape[-1], **opts)
    for start, stop in key_blocks(keys.shape[1], block_size):
        k_blk = keys[:, start:stop]
        s = torch.bmm(queries, k_blk.transpose(1, 2)) * scale
        if valid_lens is not None:
            s = s.masked_fill(~block_mask(valid_lens, batch, n_q, start, stop), -math.inf)
        m, l, acc = online_softmax_update(m, l, acc, s, values[:, start:stop])  # noqa: E741
    has_key = l > 0
    denom = l.masked_fill(~has_key, 1.0)
    return (acc / denom).masked_fill(~has_key, 0.0)
