# style: torch.where and einsum, index-assigned diagonal
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
        raise ValueError(f"negative half_width {half_width}")
    rows = torch.arange(num_queries)[:, None]
    cols = torch.arange(num_keys)[None, :]
    dist = torch.abs(rows - cols)
    in_band = dist <= half_width * dilation
    on_grid = torch.remainder(dist, dilation) == 0
    allowed = torch.logical_and(in_band, on_grid)
    if causal:
        allowed = torch.logical_and(allowed, cols <= rows)
    return allowed.to(torch.bool)


def graph_mask(adjacency, self_loops=True):
    shape = adjacency.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError("last two axes of adjacency must be equal")
    result = adjacency.clone() != 0
    if self_loops:
        idx = torch.arange(shape[-1], device=adjacency.device)
        result[..., idx, idx] = True
    return result


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    mask = mask.to(torch.bool).expand(X.shape)
    neg_inf = torch.full_like(X, float("-inf"))
    weights = softmax(torch.where(mask, X, neg_inf))
    return torch.where(mask, weights, torch.zeros_like(weights))


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = queries.shape[-1]
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / math.sqrt(d)
        attn = softmax_with_mask(scores, mask)
        self.attention_weights = attn
        return torch.einsum("bqk,bkv->bqv", self.dropout(attn), values)
