# bug: scores scaled by the number of keys instead of the query width
# expect: MaskedDotProductAttention.forward | size
# style: torch.where with -inf, einsum scores, tril for the causal part, eye added with logical_or
"""Exercise 8 with torch.where and einsum."""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    if half_width < 0:
        raise ValueError(f"half_width={half_width} < 0")
    i = torch.arange(num_queries).unsqueeze(1)
    j = torch.arange(num_keys).unsqueeze(0)
    mask = (j >= i - half_width * dilation) & (j <= i + half_width * dilation)
    mask = torch.where((j - i) % dilation == 0, mask, False)
    if causal:
        mask = mask & torch.ones(num_queries, num_keys, dtype=torch.bool).tril()
    return mask


def graph_mask(adjacency, self_loops=True):
    if adjacency.ndim not in (2, 3) or adjacency.size(-1) != adjacency.size(-2):
        raise ValueError(f"adjacency {tuple(adjacency.shape)} is not square")
    mask = adjacency.ne(0)
    if self_loops:
        mask = torch.logical_or(mask, torch.eye(adjacency.size(-1), dtype=torch.bool))
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X, dim=-1)
    minus_inf = torch.full_like(X, float("-inf"))
    return softmax(torch.where(mask, X, minus_inf), dim=-1)


class MaskedDotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = keys.size(1)
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / math.sqrt(d)
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)
