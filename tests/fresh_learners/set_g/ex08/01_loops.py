# style: python loops over queries, keys and graph entries
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
        raise ValueError("half_width must be >= 0")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for i in range(num_queries):
        for j in range(num_keys):
            off = i - j
            if abs(off) <= half_width * dilation and off % dilation == 0:
                if not causal or j <= i:
                    mask[i, j] = True
    return mask


def graph_mask(adjacency, self_loops=True):
    if adjacency.dim() < 2 or adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError("adjacency must be square in its last two axes")
    n = adjacency.shape[-1]
    mask = torch.zeros(adjacency.shape, dtype=torch.bool)
    flat_adj = adjacency.reshape(-1, n, n)
    flat_mask = mask.view(-1, n, n)
    for b in range(flat_adj.shape[0]):
        for i in range(n):
            for j in range(n):
                flat_mask[b, i, j] = bool(flat_adj[b, i, j] != 0) or (self_loops and i == j)
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X, dim=-1)
    mask = mask.expand_as(X)
    out = torch.zeros_like(X)
    for b in range(X.shape[0]):
        for i in range(X.shape[1]):
            keep = mask[b, i]
            if keep.any():
                out[b, i, keep] = softmax(X[b, i, keep], dim=-1)
    return out


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = queries.shape[-1]
        B = queries.shape[0]
        scores = torch.stack([queries[b] @ keys[b].T for b in range(B)]) / math.sqrt(d)
        self.attention_weights = softmax_with_mask(scores, mask)
        return torch.bmm(self.dropout(self.attention_weights), values)
