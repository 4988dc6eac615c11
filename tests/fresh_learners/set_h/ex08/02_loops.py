# style: explicit python loops for the masks, row-wise fix-up in the softmax
# bug: none
"""Exercise 8: structured masks: local windows and graph neighbours."""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    """Boolean mask (num_queries, num_keys) of a (dilated) sliding window."""
    if half_width < 0:
        raise ValueError("half_width cannot be negative")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for i in range(num_queries):
        for j in range(num_keys):
            offset = i - j
            if abs(offset) > half_width * dilation:
                continue
            if offset % dilation != 0:
                continue
            if causal and j > i:
                continue
            mask[i, j] = True
    return mask


def graph_mask(adjacency, self_loops=True):
    """Boolean mask from a graph's adjacency matrix: node i reads node j."""
    n_rows, n_cols = adjacency.shape[-2], adjacency.shape[-1]
    if n_rows != n_cols:
        raise ValueError(f"adjacency is not square: {n_rows} x {n_cols}")
    mask = adjacency.ne(0).clone()
    if self_loops:
        for k in range(n_rows):
            mask[..., k, k] = True
    return mask


def softmax_with_mask(X, mask):
    """Softmax over the last axis of X that gives weight only where mask is True."""
    if mask is None:
        return softmax(X)
    if mask.dim() == 2:
        mask = mask.unsqueeze(0).expand(X.shape[0], -1, -1)
    filled = X.clone()
    filled[~mask] = float("-inf")
    weights = softmax(filled)
    empty_rows = ~mask.any(dim=-1)  # (B, n_q)
    weights = weights.clone()
    weights[empty_rows] = 0.0
    return weights


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scale = math.sqrt(queries.size(-1))
        scores = queries @ keys.transpose(-2, -1) / scale
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return self.dropout(weights) @ values
