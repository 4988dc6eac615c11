# style: broadcast arange comparisons, masked_fill and torch.where
# bug: none
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
        raise ValueError(f"half_width must be >= 0, got {half_width}")
    i = torch.arange(num_queries).unsqueeze(1)
    j = torch.arange(num_keys).unsqueeze(0)
    diff = i - j
    mask = (diff.abs() <= half_width * dilation) & (diff % dilation == 0)
    if causal:
        mask = mask & (j <= i)
    return mask


def graph_mask(adjacency, self_loops=True):
    if adjacency.dim() < 2 or adjacency.shape[-2] != adjacency.shape[-1]:
        raise ValueError(f"adjacency must be (..., n, n), got {tuple(adjacency.shape)}")
    mask = adjacency != 0
    if self_loops:
        eye = torch.eye(adjacency.shape[-1], dtype=torch.bool, device=adjacency.device)
        mask = mask | eye
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X, dim=-1)
    filled = X.masked_fill(~mask, float("-inf"))
    weights = softmax(filled, dim=-1)
    return torch.where(mask, weights, torch.zeros_like(weights))


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return torch.bmm(self.dropout(weights), values)
