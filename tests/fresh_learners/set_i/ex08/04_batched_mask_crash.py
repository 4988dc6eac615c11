# style: explicit loops for the masks, mask always broadcast over the batch with expand
# bug: softmax_with_mask | always does mask.unsqueeze(0).expand(B, -1, -1), which only works for a 2-D (n_q, n_k) mask: a per-example (B, n_q, n_k) mask raises RuntimeError
# expect: softmax_with_mask | per-example (B, n_q, n_k) mask
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
        raise ValueError("half_width cannot be negative")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    reach = half_width * dilation
    for q in range(num_queries):
        for k in range(num_keys):
            dist = q - k
            if abs(dist) > reach or dist % dilation != 0:
                continue
            if causal and k > q:
                continue
            mask[q, k] = True
    return mask


def graph_mask(adjacency, self_loops=True):
    shape = adjacency.shape
    if len(shape) < 2 or shape[-2] != shape[-1]:
        raise ValueError("the last two axes of adjacency must have the same size")
    out = adjacency.ne(0)  # a fresh bool tensor, adjacency is untouched
    if self_loops:
        out.diagonal(dim1=-2, dim2=-1).fill_(True)
    return out


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    # the same mask for every example in the batch
    mask = mask.unsqueeze(0).expand(X.shape[0], -1, -1)
    neg_inf = torch.full_like(X, float("-inf"))
    masked_scores = torch.where(mask, X, neg_inf)
    empty_rows = ~mask.any(-1, keepdim=True)
    masked_scores = torch.where(empty_rows, torch.zeros_like(X), masked_scores)
    w = softmax(masked_scores)
    return w * mask.to(w.dtype)


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scale = 1.0 / math.sqrt(queries.size(-1))
        scores = queries @ keys.transpose(-2, -1) * scale
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return self.dropout(weights) @ values
