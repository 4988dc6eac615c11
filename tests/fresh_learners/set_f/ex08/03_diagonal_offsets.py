# style: window built from the allowed offsets, graph diagonal via diagonal().fill_ on a copy, einsum
# bug: none
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
        raise ValueError("half_width must be non-negative")
    diff = torch.arange(num_queries)[:, None] - torch.arange(num_keys)[None, :]  # i - j
    lowest = 0 if causal else -half_width
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for k in range(lowest, half_width + 1):
        mask |= diff == k * dilation
    return mask


def graph_mask(adjacency, self_loops=True):
    shape = adjacency.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"not square: {tuple(shape)}")
    mask = adjacency.ne(0)  # a new bool tensor
    if self_loops:
        mask.diagonal(dim1=-2, dim2=-1).fill_(True)
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X, -1)
    filled = torch.where(mask, X, torch.tensor(float("-inf"), dtype=X.dtype, device=X.device))
    w = softmax(filled, -1)
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.where(mask & has_key, w, torch.zeros((), dtype=X.dtype, device=X.device))


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = queries.shape[-1]
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / d ** 0.5
        self.attention_weights = softmax_with_mask(scores, mask)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
