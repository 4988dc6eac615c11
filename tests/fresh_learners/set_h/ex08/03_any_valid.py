# style: remainder/logical ops, neutral scores for empty rows, einsum attention
# bug: none
"""Exercise 8: structured masks: local windows and graph neighbours."""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    """Boolean mask (num_queries, num_keys) of a (dilated) sliding window."""
    if half_width < 0:
        raise ValueError(f"half_width={half_width} < 0")
    q_pos = torch.arange(num_queries).view(-1, 1).expand(num_queries, num_keys)
    k_pos = torch.arange(num_keys).view(1, -1).expand(num_queries, num_keys)
    dist = q_pos - k_pos
    in_window = torch.logical_and(dist.abs() <= half_width * dilation,
                                  torch.remainder(dist, dilation) == 0)
    if causal:
        in_window = torch.logical_and(in_window, k_pos <= q_pos)
    return in_window.to(torch.bool)


def graph_mask(adjacency, self_loops=True):
    """Boolean mask from a graph's adjacency matrix: node i reads node j."""
    if adjacency.ndim not in (2, 3) or adjacency.shape[-2] != adjacency.shape[-1]:
        raise ValueError("adjacency must be (n, n) or (B, n, n)")
    n = adjacency.shape[-1]
    edges = adjacency.to(torch.bool)
    if not self_loops:
        return edges.clone()
    diag = torch.eye(n, dtype=torch.bool, device=adjacency.device).expand_as(edges)
    return torch.logical_or(edges, diag)


def softmax_with_mask(X, mask):
    """Softmax over the last axis of X that gives weight only where mask is True."""
    if mask is None:
        return softmax(X, dim=-1)
    mask = mask.bool().expand_as(X)
    any_valid = mask.any(dim=-1, keepdim=True)
    neg_inf = torch.full_like(X, float("-inf"))
    scores = torch.where(mask, X, neg_inf)
    scores = torch.where(any_valid, scores, torch.zeros_like(X))  # empty rows: finite, zeroed below
    weights = softmax(scores, dim=-1)
    return weights * mask.to(weights.dtype)


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        d = queries.shape[-1]
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / math.sqrt(d)
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)
