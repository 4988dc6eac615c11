# style: python double loops filling the masks, explicit zeroing of empty rows
# bug: sliding_window_mask | the window test is abs(i - j) <= half_width, not half_width * dilation: with dilation > 1 the window keeps only about half_width / dilation keys per side
# expect: sliding_window_mask | half_width * dilation
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
        raise ValueError("half_width < 0")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for i in range(num_queries):
        for j in range(num_keys):
            if causal and j > i:
                continue
            if abs(i - j) <= half_width and (i - j) % dilation == 0:
                mask[i, j] = True
    return mask


def graph_mask(adjacency, self_loops=True):
    if adjacency.ndim < 2 or adjacency.shape[-2] != adjacency.shape[-1]:
        raise ValueError("adjacency is not square")
    mask = adjacency.clone() != 0
    if self_loops:
        for i in range(adjacency.shape[-1]):
            mask[..., i, i] = True
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    mask = mask.expand_as(X)
    neg = torch.full_like(X, float("-inf"))
    weights = softmax(torch.where(mask, X, neg))
    weights = torch.nan_to_num(weights, nan=0.0)
    return weights * mask


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
