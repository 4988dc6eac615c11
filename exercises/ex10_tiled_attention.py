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
    raise NotImplementedError("key_blocks")


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
    raise NotImplementedError("online_softmax_update")


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Boolean (B, n_q, stop - start): True where key start .. stop - 1 is below the row's valid length.

    valid_lens is (B,) (one length per example) or (B, n_q) (one per
    query), as in exercise 1's masked_softmax; raise ValueError for any
    other shape. Build it from this block's key indices only: never a mask
    over all n_k keys.
    """
    raise NotImplementedError("block_mask")


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
    raise NotImplementedError("tiled_attention")
