# bug: the earlier sums are rescaled by exp(m_new - m_old), the inverse factor
# expect: online_softmax_update | swapped
# style: keys and values padded to whole blocks (padding masked like invalid keys), float64 statistics, result cast back
"""Exercise 10 on padded blocks."""

import math

import torch
import torch.nn.functional as F


def key_blocks(num_keys, block_size=16):
    """Blocks of keys."""
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    count = (num_keys + block_size - 1) // block_size
    return [(i * block_size, min((i + 1) * block_size, num_keys)) for i in range(count)]


def online_softmax_update(m, l, acc, scores, values):  # noqa: E741
    """One block folded into the statistics."""
    m_new = torch.cat([m, scores], dim=-1).amax(dim=-1, keepdim=True)
    ref = torch.nan_to_num(m_new, neginf=0.0)
    p = (scores - ref).exp()
    r = (ref - m).exp()
    return m_new, l * r + p.sum(-1, keepdim=True), acc * r + p.bmm(values)


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Which keys of the block are valid."""
    lens = torch.as_tensor(valid_lens)
    if lens.ndim == 1 and len(lens) == batch:
        lens = lens[:, None]
    elif lens.ndim != 2 or lens.shape[0] != batch or lens.shape[1] != num_queries:
        raise ValueError("valid_lens must have shape (batch,) or (batch, num_queries)")
    index = torch.arange(start, stop)
    return (index < lens[..., None]).expand(batch, num_queries, stop - start)


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Padded to whole blocks, statistics in float64."""
    B, n_q, d = queries.shape
    n_k = keys.shape[1]
    blocks = key_blocks(n_k, block_size)
    if valid_lens is not None:
        block_mask(valid_lens, B, n_q, 0, 0)  # the shape check, also with no keys
    padded = len(blocks) * block_size - n_k
    keys_p = F.pad(keys, (0, 0, 0, padded)).double()
    values_p = F.pad(values, (0, 0, 0, padded)).double()
    q = queries.double()
    m = torch.full((B, n_q, 1), -math.inf, dtype=torch.float64)
    l = torch.zeros(B, n_q, 1, dtype=torch.float64)  # noqa: E741
    acc = torch.zeros(B, n_q, values.shape[-1], dtype=torch.float64)
    for start, _ in blocks:
        stop = start + block_size  # a whole block, the padding included
        s = q.bmm(keys_p[:, start:stop].transpose(1, 2)) / math.sqrt(d)
        visible = (torch.arange(start, stop) < n_k).expand(B, n_q, block_size)
        if valid_lens is not None:
            visible = visible & block_mask(valid_lens, B, n_q, start, stop)
        s = torch.where(visible, s, torch.tensor(-math.inf, dtype=s.dtype))
        m, l, acc = online_softmax_update(m, l, acc, s, values_p[:, start:stop])  # noqa: E741
    out = acc / torch.where(l > 0, l, torch.ones_like(l))
    return out.to(queries.dtype)
