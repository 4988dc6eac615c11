# style: Python loops over examples, queries and blocks; each row's statistics are 0-d tensors, rows stacked at the end
"""Exercise 10, one query row at a time."""

import math

import torch


def key_blocks(num_keys, block_size=16):
    """Blocks of keys."""
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
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
    """One block folded into the statistics."""
    block_max = scores.max(dim=-1, keepdim=True).values
    m_new = torch.where(block_max > m, block_max, m)
    finite = torch.isfinite(m_new)
    base = torch.where(finite, m_new, torch.zeros_like(m_new))
    weights = torch.exp(scores - base)
    factor = torch.exp(m - base)
    return m_new, factor * l + weights.sum(dim=-1, keepdim=True), factor * acc + weights @ values


def block_mask(valid_lens, batch, num_queries, start, stop):
    """Which keys of the block are valid."""
    lens = valid_lens if isinstance(valid_lens, torch.Tensor) else torch.tensor(valid_lens)
    if list(lens.shape) == [batch]:
        lens = torch.stack([lens] * num_queries, dim=1)
    elif list(lens.shape) != [batch, num_queries]:
        raise ValueError(f"bad valid_lens shape {list(lens.shape)}")
    mask = torch.zeros(batch, num_queries, stop - start, dtype=torch.bool)
    for b in range(batch):
        for i in range(num_queries):
            for j in range(start, stop):
                mask[b, i, j - start] = bool(j < lens[b, i])
    return mask


def tiled_attention(queries, keys, values, block_size=16, valid_lens=None):
    """Row by row."""
    blocks = key_blocks(keys.shape[1], block_size)
    if valid_lens is not None:
        lens = torch.as_tensor(valid_lens)
        if lens.dim() == 1 and lens.shape[0] == queries.shape[0]:
            lens = lens.unsqueeze(1).repeat(1, queries.shape[1])
        elif tuple(lens.shape) != tuple(queries.shape[:2]):
            raise ValueError("valid_lens must be (B,) or (B, n_q)")
    scale = 1.0 / math.sqrt(queries.shape[-1])
    out = []
    for b in range(queries.shape[0]):
        rows = []
        for i in range(queries.shape[1]):
            q = queries[b, i]  # (d,)
            m = torch.tensor(float("-inf"), dtype=queries.dtype)
            total = torch.tensor(0.0, dtype=queries.dtype)
            acc = torch.zeros(values.shape[-1], dtype=queries.dtype)
            for start, stop in blocks:
                s = (keys[b, start:stop] @ q) * scale  # (blk,)
                if valid_lens is not None:
                    visible = torch.arange(start, stop) < lens[b, i]
                    s = torch.where(visible, s, torch.full_like(s, float("-inf")))
                new_m = torch.maximum(m, s.max())
                shift = new_m if torch.isfinite(new_m) else torch.zeros_like(new_m)
                p = torch.exp(s - shift)
                factor = torch.exp(m - shift)
                total = total * factor + p.sum()
                acc = acc * factor + p @ values[b, start:stop]
                m = new_m
            rows.append(acc / total if total > 0 else acc)
        out.append(torch.stack(rows) if rows else torch.zeros(0, values.shape[-1], dtype=queries.dtype))
    return torch.stack(out)
