# style: bands, adjacency made symmetric
# bug: graph_mask | ORs the adjacency with its transpose, making a directed graph symmetric
# expect: graph_mask | directed
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
        raise ValueError("negative half_width")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    for k in range(-half_width, half_width + 1):
        if causal and k > 0:
            continue
        offset = k * dilation  # key j = i + offset
        mask |= _band(num_queries, num_keys, offset)
    return mask


def _band(n_q, n_k, offset):
    rows = torch.arange(n_q).view(-1, 1)
    cols = torch.arange(n_k).view(1, -1)
    return cols - rows == offset


def graph_mask(adjacency, self_loops=True):
    if adjacency.ndim < 2 or adjacency.size(-1) != adjacency.size(-2):
        raise ValueError("adjacency is not square")
    r = adjacency.size(-1)
    mask = adjacency.ne(0) | adjacency.transpose(-1, -2).ne(0)
    if self_loops:
        mask = torch.logical_or(mask, torch.eye(r, dtype=torch.bool))
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X, dim=-1)
    mask = mask.to(torch.bool)
    if mask.dim() == 2:
        mask = mask.unsqueeze(0)
    scores = torch.where(mask, X, torch.full_like(X, float("-inf")))
    weights = softmax(scores, dim=-1)
    has_key = mask.any(dim=-1, keepdim=True)
    return weights.masked_fill(~(mask & has_key), 0.0)


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scale = 1.0 / math.sqrt(queries.size(-1))
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) * scale
        self.attention_weights = softmax_with_mask(scores, mask)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
