# style: einsum everywhere, range-based key_blocks, helpers for state init
# bug: none
"""Exercise 10: tiled attention with the online softmax (chapter 11)."""

import math

import torch


def key_blocks(num_keys, block_size=16):
    """The blocks of key indices, in order: [(start, stop), ...]."""
    if block_size < 1:
        raise ValueError(f"block_size={block_size} must be >= 1")
    n_blocks = (num_keys + block_size - 1) // block_size
    out = []
    for b in range(n_blocks):
        out.append((b * block_size, min((b + 1) * block_size, num_keys)))
    return out


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    """One step of the online softmax -> (m, l, acc)."""
    m_new = torch.max(m, torch.amax(scores, dim=-1, keepdim=True))
    ref = torch.where(torch.isneginf(m_new), torch.zeros_like(m_new), m_new)
    p = torch.exp(scores - ref)
    alpha = torch.exp(m - ref)
    l_new = alpha * l + torch.sum(p, dim=-1, keepdim=True)
    acc_new = alpha * acc + torch.einsum("bqk,bkv->bqv", p, values)
    return m_new, l_new, acc_new


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Boolean (B, n_q, stop - start)."""
    if valid_lens.dim() == 1:
        lens = valid_lens.view(-1, 1, 1)
    elif valid_lens.dim() == 2:
        lens = valid_lens.unsqueeze(-1)
    else:
        raise ValueError(f"valid_lens must be (B,) or (B, n_q); got {valid_lens.dim()} dims")
    cols = torch.arange(start, stop, device=valid_lens.device).view(1, 1, -1)
    return (cols < lens).expand(batch, num_queries, stop - start)


def _init_state(queries, v_dim):
    B, n_q, _ = queries.shape
    m = queries.new_full((B, n_q, 1), float("-inf"))
    l = queries.new_zeros((B, n_q, 1))  # noqa: E741
    acc = queries.new_zeros((B, n_q, v_dim))
    return m, l, acc


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Scaled dot-product attention, one block of keys at a time -> (B, n_q, v)."""
    B, n_q, d = queries.shape
    m, l, acc = _init_state(queries, values.shape[-1])  # noqa: E741
    for start, stop in key_blocks(keys.shape[1], block_size):
        scores = torch.einsum("bqd,bkd->bqk", queries, keys[:, start:stop]) / math.sqrt(d)
        if valid_lens is not None:
            ok = block_mask(valid_lens, B, n_q, start, stop)
            scores = torch.where(ok, scores, torch.full_like(scores, float("-inf")))
        m, l, acc = online_softmax_update(m, l, acc, scores, values[:, start:stop])  # noqa: E741
    positive = l > 0
    return torch.where(positive, acc / torch.where(positive, l, torch.ones_like(l)), torch.zeros_like(acc))
