# style: Python loops over queries and keys, -inf written in with index assignment on a copy
"""Exercise 8 with explicit loops."""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    """Window of half_width on each side."""
    if half_width < 0:
        raise ValueError("half_width must not be negative")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for i in range(num_queries):
        for j in range(num_keys):
            if abs(i - j) <= half_width * dilation and (i - j) % dilation == 0 and (not causal or j <= i):
                mask[i, j] = True
    return mask


def graph_mask(adjacency, self_loops=True):
    """Edges as a boolean mask."""
    n = adjacency.shape[-1]
    if adjacency.dim() < 2 or adjacency.shape[-2] != n:
        raise ValueError("adjacency must be square")
    mask = adjacency.bool()
    if self_loops:
        mask = mask.clone()
        for i in range(n):
            mask[..., i, i] = True
    return mask


def softmax_with_mask(X, mask):
    """Hidden scores set to -inf on a copy."""
    if mask is None:
        return softmax(X)
    scores = X.clone()
    scores[~mask.expand(X.shape)] = float("-inf")
    return softmax(scores)


class MaskedDotProductAttention(nn.Module):
    """Masked scaled dot-product attention."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scores = queries @ keys.transpose(-1, -2) / math.sqrt(queries.shape[-1])
        self.attention_weights = softmax_with_mask(scores, mask)
        return self.dropout(self.attention_weights) @ values
