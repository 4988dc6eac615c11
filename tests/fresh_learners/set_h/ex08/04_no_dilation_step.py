# style: broadcasting index grids, window by distance only
# bug: sliding_window_mask | widens the window to half_width * dilation but never checks that i - j is a multiple of dilation.
# expect: sliding_window_mask | multiple of dilation
"""Exercise 8: structured masks: local windows and graph neighbours."""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    """Boolean mask (num_queries, num_keys) of a (dilated) sliding window."""
    if half_width < 0:
        raise ValueError(f"half_width must be >= 0, got {half_width}")
    i = torch.arange(num_queries).unsqueeze(1)
    j = torch.arange(num_keys).unsqueeze(0)
    diff = i - j
    mask = diff.abs() <= half_width * dilation
    if causal:
        mask = mask & (j <= i)
    return mask


def graph_mask(adjacency, self_loops=True):
    """Boolean mask from a graph's adjacency matrix: node i reads node j."""
    if adjacency.dim() < 2 or adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError(f"adjacency must be square in its last two axes, got {tuple(adjacency.shape)}")
    mask = adjacency != 0
    if self_loops:
        eye = torch.eye(adjacency.shape[-1], dtype=torch.bool, device=adjacency.device)
        mask = mask | eye
    return mask


def softmax_with_mask(X, mask):
    """Softmax over the last axis of X that gives weight only where mask is True."""
    if mask is None:
        return softmax(X, dim=-1)
    mask = mask.to(torch.bool)
    scores = X.masked_fill(~mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return torch.where(mask, weights, torch.zeros_like(weights))


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = softmax_with_mask(scores, mask)
        return torch.bmm(self.dropout(self.attention_weights), values)
