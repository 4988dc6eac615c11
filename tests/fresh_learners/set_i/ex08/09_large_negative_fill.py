# style: d2l-like, masked_fill with a large negative number, helper for scaling
# bug: softmax_with_mask | fills masked scores with -1e6 and never zeroes the result, so a row with no True key comes out uniform (1 / n_k everywhere) instead of all zeros
# expect: softmax_with_mask | row with no True key
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
    rows = torch.arange(num_queries).view(-1, 1).expand(num_queries, num_keys)
    cols = torch.arange(num_keys).view(1, -1).expand(num_queries, num_keys)
    delta = (rows - cols).abs()
    keep = (delta <= half_width * dilation) & (delta % dilation == 0)
    if causal:
        keep &= cols <= rows
    return keep


def graph_mask(adjacency, self_loops=True):
    if adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError("adjacency must be square")
    keep = adjacency != 0
    if self_loops:
        keep = keep | torch.eye(keep.shape[-1], dtype=torch.bool, device=keep.device)
    return keep


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    return softmax(X.masked_fill(~mask, -1e6))


def _scaled_scores(queries, keys):
    return torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(queries.shape[-1])


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        self.attention_weights = softmax_with_mask(_scaled_scores(queries, keys), mask)
        return torch.bmm(self.dropout(self.attention_weights), values)
