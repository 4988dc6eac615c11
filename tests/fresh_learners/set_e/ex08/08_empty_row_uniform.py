# style: loops, large negative fill only
# bug: softmax_with_mask | masked keys filled with -1e9 but weights not zeroed afterwards, so a row with no True key becomes uniform
# expect: softmax_with_mask | zero
"""Exercise 8: structured masks: local windows and graph neighbours (chapter 8,
"History and paper map", the local-attention experiment).

Masks here are boolean tensors, True where a query may read a key.
"""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    if half_width < 0:
        raise ValueError("half_width cannot be negative")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    reach = half_width * dilation
    for q in range(num_queries):
        for k in range(num_keys):
            offset = q - k
            if abs(offset) > reach:
                continue
            if offset % dilation != 0:
                continue
            if causal and k > q:
                continue
            mask[q, k] = True
    return mask


def graph_mask(adjacency, self_loops=True):
    n_rows, n_cols = adjacency.shape[-2], adjacency.shape[-1]
    if n_rows != n_cols:
        raise ValueError(f"adjacency is {n_rows} x {n_cols}, not square")
    edges = adjacency.ne(0)
    if self_loops:
        diag = torch.eye(n_rows, dtype=torch.bool, device=adjacency.device)
        edges = torch.logical_or(edges, diag.expand_as(edges))
    return edges


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    keep = mask.bool()
    if keep.dim() == 2:
        keep = keep[None, :, :]
    filled = X.masked_fill(~keep, -1e9)
    return softmax(filled)


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scale = 1.0 / math.sqrt(queries.size(-1))
        scores = queries @ keys.transpose(-2, -1) * scale
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return self.dropout(weights) @ values
