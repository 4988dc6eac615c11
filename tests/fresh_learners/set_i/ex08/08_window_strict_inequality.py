# style: vectorised broadcasting with index grids
# bug: sliding_window_mask | uses |i - j| < half_width * dilation (strict) instead of <=, so the outermost keys of each window are dropped and half_width = 0 gives an empty mask instead of the diagonal
# expect: sliding_window_mask | |i - j| <= half_width
"""Exercise 8: structured masks: local windows and graph neighbours (chapter 8,
"History and paper map", the local-attention experiment).

ex01's masked_softmax keeps a prefix of the keys (valid_lens). A structured
mask keeps any set of keys: a window around each query (Luong's local
attention, Longformer's sliding window) or a node's neighbours in a graph
(GAT). Masks here are boolean tensors, True where a query may read a key.
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
    offset = i - j
    mask = (offset.abs() < half_width * dilation) & (offset % dilation == 0)
    if causal:
        mask = mask & (j <= i)
    return mask


def graph_mask(adjacency, self_loops=True):
    if adjacency.dim() < 2 or adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError(f"adjacency must be square in its last two axes, got {tuple(adjacency.shape)}")
    mask = adjacency != 0
    if self_loops:
        n = adjacency.shape[-1]
        mask = mask | torch.eye(n, dtype=torch.bool, device=adjacency.device)
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    mask = mask.to(torch.bool)
    # rows without any allowed key: give them finite scores so nothing turns into NaN
    any_key = mask.any(dim=-1, keepdim=True)
    scores = X.masked_fill(~mask, float("-inf"))
    scores = scores.masked_fill(~any_key, 0.0)
    weights = softmax(scores)
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
