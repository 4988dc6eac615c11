"""Exercise 8: structured masks: local windows and graph neighbours (chapter 8).

ex01's masked_softmax keeps a prefix of the keys (valid_lens). A structured
mask keeps any set: a window of 2D + 1 keys around each query (Luong's local
attention, the sliding windows of Longformer) or the neighbours of a node in a
graph (GAT). The mask is a boolean tensor, True where the query may read the
key; masked scores become -inf and ex01's softmax turns them into weight 0.
"""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    """Boolean (num_queries, num_keys): query i sees key j when |i - j| <= half_width * dilation and i - j is a
    multiple of dilation (and j <= i if causal). The default dilation is 1 in the published exercise; a class
    variant gives each learner their own (course/common/exercise_variants.py)."""
    if half_width < 0:
        raise ValueError(f"half_width must be >= 0; got {half_width}")
    query_index = torch.arange(num_queries)[:, None]  # (n_q, 1)
    key_index = torch.arange(num_keys)[None, :]  # (1, n_k)
    mask = (query_index - key_index).abs() <= half_width * dilation  # (n_q, n_k)
    mask = mask & ((query_index - key_index) % dilation == 0)  # (n_q, n_k): every dilation-th key
    if causal:
        mask = mask & (key_index <= query_index)  # no key after the query
    return mask


def graph_mask(adjacency, self_loops=True):
    """Boolean mask from a graph's adjacency matrix: node i reads node j.

    adjacency: (n, n) or (B, n, n), any dtype; adjacency[..., i, j] != 0 is
    an edge i -> j, so row i is node i's query and column j the key it may
    read. The graph may be directed: do not make it symmetric.
    With self_loops=True every node also reads itself (the diagonal is True).

    - Returns torch.bool of adjacency's shape, a new tensor.
    - Do not modify adjacency in place (no fill_diagonal_, no writing into
      it): the caller's matrix must be unchanged afterwards.
    - Raise ValueError when the last two axes are not square.
    """
    if adjacency.dim() < 2 or adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError(f"adjacency must have shape (n, n) or (B, n, n); got {tuple(adjacency.shape)}")
    mask = adjacency != 0  # (..., n, n): an edge i -> j lets node i read node j
    if self_loops:
        n = adjacency.shape[-1]
        mask = mask | torch.eye(n, dtype=torch.bool, device=adjacency.device)  # every node reads itself
    return mask


def softmax_with_mask(X, mask):
    """Softmax over the last axis of X (B, n_q, n_k) where only keys with mask True get weight."""
    if mask is None:
        return softmax(X, dim=-1)
    mask = mask.to(torch.bool)  # (n_q, n_k) or (B, n_q, n_k), broadcast over the batch
    scores = X.masked_fill(~mask, float("-inf"))  # a copy: X is left as it was
    return softmax(scores, dim=-1)  # (B, n_q, n_k); a row with no visible key is all 0


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v), mask (n_q, n_k) or (B, n_q, n_k) -> (B, n_q, v)."""
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)
        self.attention_weights = softmax_with_mask(scores, mask)  # (B, n_q, n_k)
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)
