# style: einsum scores, triu/tril and remainder for the window, logical_or for self-loops
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
        raise ValueError(f"negative half_width {half_width}")
    w = half_width * dilation
    ones = torch.ones(num_queries, num_keys, dtype=torch.bool)
    # band: i - w <= j <= i + w
    band = torch.triu(ones, diagonal=-w) & torch.tril(ones, diagonal=w)
    if causal:
        band = band & torch.tril(ones)
    diff = torch.arange(num_queries)[:, None] - torch.arange(num_keys)[None, :]
    return band & (torch.remainder(diff, dilation) == 0)


def graph_mask(adjacency, self_loops=True):
    if adjacency.ndim not in (2, 3) or adjacency.size(-1) != adjacency.size(-2):
        raise ValueError(f"expected (n, n) or (B, n, n), got {list(adjacency.shape)}")
    edges = adjacency.bool() if adjacency.dtype != torch.bool else adjacency.clone()
    if not self_loops:
        return edges
    eye = torch.eye(adjacency.size(-1), dtype=torch.bool, device=adjacency.device)
    return torch.logical_or(edges, eye.expand_as(edges))


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    keep = mask.bool()
    row_has_key = keep.any(-1, keepdim=True)
    safe = X.masked_fill(~keep, float("-inf")).masked_fill(~row_has_key, 0.0)
    return softmax(safe).masked_fill(~keep, 0.0)


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
