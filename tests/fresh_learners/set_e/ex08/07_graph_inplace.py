# style: vectorised, diagonal filled in place
# bug: graph_mask | writes the diagonal into the result of adjacency.bool(), which is the caller's tensor itself when adjacency is already bool
# expect: graph_mask | place
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
    if adjacency.dim() < 2 or adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError(f"adjacency must be square in its last two axes, got {tuple(adjacency.shape)}")
    mask = adjacency.bool()
    if self_loops:
        mask.diagonal(dim1=-2, dim2=-1).fill_(True)
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    mask = mask.to(torch.bool)
    if mask.dim() == 2:
        mask = mask.unsqueeze(0).expand_as(X)
    scores = X.masked_fill(~mask, float("-inf"))
    weights = softmax(scores)
    return weights.masked_fill(~mask, 0.0)


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
