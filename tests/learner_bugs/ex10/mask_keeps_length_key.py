# bug: the key at the valid length itself is kept (<= instead of <)
# expect: block_mask | boundary
# style: einsum for scores and weighted values, statistics (B, n_q) unsqueezed where needed, masked_fill for empty rows
"""Exercise 10 with einsum."""

import math

import torch


def key_blocks(num_keys, block_size=16):
    """Blocks of keys."""
    if not block_size >= 1:
        raise ValueError(f"block_size={block_size} is too small")
    starts = list(range(0, num_keys, block_size))
    return [(s, min(num_keys, s + block_size)) for s in starts]


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    """One block folded into the statistics."""
    m2, l2 = m.squeeze(-1), l.squeeze(-1)  # (B, n_q)
    new = torch.maximum(m2, scores.amax(-1))  # (B, n_q)
    safe = new.masked_fill(new == float("-inf"), 0.0)
    p = torch.exp(scores - safe.unsqueeze(-1))  # (B, n_q, blk)
    decay = torch.exp(m2 - safe)  # (B, n_q)
    l_new = decay * l2 + p.sum(-1)
    acc_new = decay.unsqueeze(-1) * acc + torch.einsum("bqk,bkv->bqv", p, values)
    return new.unsqueeze(-1), l_new.unsqueeze(-1), acc_new


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Which keys of the block are valid."""
    if valid_lens.shape == (batch,):
        per_row = valid_lens.view(batch, 1, 1)
    elif valid_lens.shape == (batch, num_queries):
        per_row = valid_lens.unsqueeze(-1)
    else:
        raise ValueError(f"valid_lens has shape {tuple(valid_lens.shape)}")
    return (torch.arange(start, stop) + 0).view(1, 1, -1) <= per_row.expand(batch, num_queries, 1)


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Block by block with einsum."""
    B, n_q, d = queries.shape
    m = queries.new_full((B, n_q, 1), -math.inf)
    l = queries.new_zeros(B, n_q, 1)  # noqa: E741
    acc = queries.new_zeros(B, n_q, values.shape[2])
    for start, stop in key_blocks(keys.shape[1], block_size):
        s = torch.einsum("bqd,bkd->bqk", queries, keys[:, start:stop]) / d**0.5
        if valid_lens is not None:
            s = s.masked_fill(~block_mask(valid_lens, B, n_q, start, stop), -math.inf)
        m, l, acc = online_softmax_update(m, l, acc, s, values[:, start:stop])  # noqa: E741
    return acc / l.masked_fill(l == 0, 1.0)
