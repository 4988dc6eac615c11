"""Exercise 10: tiled attention with the online softmax (chapter 11, FlashAttention).

softmax(Q K^T / sqrt(d)) V computed one block of keys at a time (Dao et al. 2022): per query, a running max m,
a running sum l of exp(score - m) and a running sum acc of exp(score - m) v_j. When a block raises the max, what
was summed so far is multiplied by exp(m_old - m_new), so every term ends up shifted by the row's true max; the
output is acc / l, divided once at the end. Only (B, n_q, block) slices of the scores ever exist.
"""

import math

import torch


def key_blocks(num_keys, block_size=16):
    """The blocks of key indices, in order: [(start, stop), ...] with keys start .. stop - 1 in each.

    Every block has block_size keys except the last, which is shorter when
    num_keys is not a multiple of block_size; together they cover 0 ..
    num_keys - 1 exactly once (no block at all for 0 keys). block_size is 16
    in the published exercise; in a class your exercise variant gives you
    your own: the Practice page and `python -m grader --variant N` show it,
    write it as the default here and in tiled_attention.
    Raise ValueError when block_size < 1.

        key_blocks(10, 4) == [(0, 4), (4, 8), (8, 10)]
    """
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1; got {block_size}")
    return [(start, min(start + block_size, num_keys)) for start in range(0, num_keys, block_size)]


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    """One step of the online softmax: fold one block of keys into the running statistics -> (m, l, acc).

    m (B, n_q, 1): the running max of the scores seen so far (-inf before
    any finite score); l (B, n_q, 1): the running sum of exp(score - m);
    acc (B, n_q, v): the running sum of exp(score - m) * value. scores
    (B, n_q, blk): this block's scaled scores, -inf where a key is masked;
    values (B, blk, v): this block's values. Return the new (m, l, acc):

        m_new = max(m, the block's max)
        p = exp(scores - m_new)                       (B, n_q, blk)
        l_new = l * exp(m - m_new) + p.sum(-1)
        acc_new = acc * exp(m - m_new) + p @ values

    A row whose scores are all -inf so far (m_new = -inf) must give p = 0,
    l_new = 0 and acc_new = 0, not exp(-inf - (-inf)) = NaN: shift such a
    row by 0 instead of m_new. Do not divide by l here: that happens once,
    at the end. Leave the inputs unchanged (return new tensors).
    """
    m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))  # (B, n_q, 1)
    shift = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))  # (B, n_q, 1): 0 while all -inf
    p = torch.exp(scores - shift)  # (B, n_q, blk): masked keys give exp(-inf) = 0
    rescale = torch.exp(m - shift)  # (B, n_q, 1): exp(m_old - m_new); 0 while m_old = -inf
    l_new = l * rescale + p.sum(dim=-1, keepdim=True)  # (B, n_q, 1)
    acc_new = acc * rescale + torch.bmm(p, values)  # (B, n_q, v)
    return m_new, l_new, acc_new


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Boolean (B, n_q, stop - start): True where key start .. stop - 1 is below the row's valid length.

    valid_lens is (B,) (one length per example) or (B, n_q) (one per
    query), as in exercise 1's masked_softmax; raise ValueError for any
    other shape. Build it from this block's key indices only: never a mask
    over all n_k keys.
    """
    lens = torch.as_tensor(valid_lens)
    if lens.dim() == 1 and lens.shape[0] == batch:
        lens = lens[:, None].expand(batch, num_queries)  # (B, n_q)
    elif not (lens.dim() == 2 and tuple(lens.shape) == (batch, num_queries)):
        raise ValueError(f"valid_lens must have shape (B,) = ({batch},) or (B, n_q) = ({batch}, {num_queries}); "
                         f"got {tuple(lens.shape)}")
    key_index = torch.arange(start, stop, device=lens.device)  # (blk,)
    return key_index[None, None, :] < lens[:, :, None]  # (B, n_q, blk)


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Scaled dot-product attention, one block of keys at a time -> (B, n_q, v).

    queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v); the result
    equals exercise 3's DotProductAttention (no dropout): softmax over the
    keys of queries @ keys^T / sqrt(d), times values. valid_lens is None,
    (B,) or (B, n_q) as in exercise 1 (keys at or past the length get
    weight 0); a row with no valid key gives zeros, with zero gradients.

    Start from m = -inf, l = 0, acc = 0 (queries' dtype); for each
    (start, stop) of key_blocks(n_k, block_size): the block's scores
    queries @ keys[:, start:stop]^T / sqrt(d) (B, n_q, blk), -inf where
    block_mask says a key is masked, then online_softmax_update. Return
    acc / l at the end, dividing only where l > 0 (a row without a valid
    key keeps acc = 0).

    The checks measure the tensors your function creates: none may be as
    large as a quarter of the full (B, n_q, n_k) scores, so never build the
    scores, the weights or a mask over all the keys at once (torch.softmax
    over all keys is therefore out too). Do not modify the inputs in place.
    """
    batch, num_queries, d = queries.shape
    like = {"dtype": queries.dtype, "device": queries.device}
    m = torch.full((batch, num_queries, 1), float("-inf"), **like)  # (B, n_q, 1)
    l = torch.zeros(batch, num_queries, 1, **like)  # (B, n_q, 1)  # noqa: E741
    acc = torch.zeros(batch, num_queries, values.shape[-1], **like)  # (B, n_q, v)
    for start, stop in key_blocks(keys.shape[1], block_size):
        scores = torch.bmm(queries, keys[:, start:stop].transpose(1, 2)) / math.sqrt(d)  # (B, n_q, blk)
        if valid_lens is not None:
            mask = block_mask(valid_lens, batch, num_queries, start, stop).to(queries.device)  # (B, n_q, blk)
            scores = scores.masked_fill(~mask, float("-inf"))  # (B, n_q, blk)
        m, l, acc = online_softmax_update(m, l, acc, scores, values[:, start:stop])  # noqa: E741
    return acc / torch.where(l > 0, l, torch.ones_like(l))  # (B, n_q, v): an empty row stays 0
