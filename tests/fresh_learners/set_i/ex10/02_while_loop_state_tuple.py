# style: while loop for the blocks, running state kept in a tuple, matmul operator, masked_fill guards
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
    block_max = scores.max(dim=-1, keepdim=True).values
    new_max = torch.max(m, block_max)
    dead = new_max == float("-inf")
    ref = new_max.masked_fill(dead, 0.0)
    correction = (m - ref).exp()
    probs = (scores - ref).exp()
    new_l = correction * l + probs.sum(-1, keepdim=True)
    new_acc = correction * acc + probs @ values
    return new_max, new_l, new_acc


def block_mask(valid_lens, batch, num_queries, start, stop):
    keys_here = torch.arange(start, stop, device=valid_lens.device)
    if valid_lens.shape == (batch,):
        limit = valid_lens[:, None, None]
    elif valid_lens.shape == (batch, num_queries):
        limit = valid_lens[:, :, None]
    else:
        raise ValueError(f"unsupported valid_lens shape {tuple(valid_lens.shape)}")
    out = keys_here[None, None, :] < limit
    return out.expand(batch, num_queries, stop - start)


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    batch, n_q, d = queries.shape
    opts = dict(dtype=queries.dtype, device=queries.device)
    state = (
        torch.full((batch, n_q, 1), -math.inf, **opts),
        torch.zeros(batch, n_q, 1, **opts),
        torch.zeros(batch, n_q, values.size(-1), **opts),
    )
    for start, stop in key_blocks(keys.size(1), block_size):
        k_blk = keys[:, start:stop]
        v_blk = values[:, start:stop]
        s = queries @ k_blk.transpose(-1, -2) / math.sqrt(d)
        if valid_lens is not None:
            s = s.masked_fill(block_mask(valid_lens, batch, n_q, start, stop).logical_not(), -math.inf)
        state = online_softmax_update(*state, s, v_blk)
    _, total, acc = state
    has_keys = total > 0
    return torch.where(has_keys, acc / total.masked_fill(~has_keys, 1.0), torch.zeros_like(acc))
