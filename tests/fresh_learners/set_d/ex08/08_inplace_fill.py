# style: broadcast differences, in-place masked fill
# bug: softmax_with_mask | fills the masked scores with masked_fill_ on X itself, modifying the caller's tensor in place
# expect: softmax_with_mask | place
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
    """Boolean mask (num_queries, num_keys) of a (dilated) sliding window.

    Query i may read key j when |i - j| <= half_width * dilation and i - j
    is a multiple of dilation: a window of 2 * half_width + 1 keys centred on
    the query, every dilation-th key (fewer at the edges; Longformer's dilated
    windows). With causal=True it also needs j <= i (no key after the query).

    - dtype torch.bool; half_width = 0 keeps the diagonal only.
    - Raise ValueError when half_width < 0.
    - The default dilation is 1 (every key) in the published exercise. In a
      class your exercise variant gives you your own default (the Practice
      page and `python -m grader --variant N` show it): write it as the
      default of dilation here; the grader calls sliding_window_mask without
      it.
    """
    if half_width < 0:
        raise ValueError(f"half_width must be >= 0, got {half_width}")
    i = torch.arange(num_queries).unsqueeze(1)
    j = torch.arange(num_keys).unsqueeze(0)
    diff = i - j
    mask = (diff.abs() <= half_width * dilation) & (diff % dilation == 0)
    if causal:
        mask = mask & (j <= i)
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
        raise ValueError(f"adjacency must be square in its last two axes, got {tuple(adjacency.shape)}")
    mask = adjacency != 0
    if self_loops:
        n = adjacency.shape[-1]
        eye = torch.eye(n, dtype=torch.bool, device=adjacency.device)
        mask = mask | eye
    return mask


def softmax_with_mask(X, mask):
    """Softmax over the last axis of X (B, n_q, n_k) that gives weight only where mask is True.

    mask: None (no mask), or a boolean (n_q, n_k) (the same for every
    example) or (B, n_q, n_k) tensor.

    - Keys where mask is False get weight exactly 0 and the others sum to 1;
      a row with no True key is all zeros (never NaN, never uniform).
    - Use ex01's softmax (imported above): it handles -inf.
    - X itself is not modified in place. Returns weights (B, n_q, n_k).
    """
    if mask is None:
        return softmax(X, dim=-1)
    scores = X.masked_fill_(~mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return torch.where(mask, weights, torch.zeros_like(weights))


class MaskedDotProductAttention(nn.Module):
    """Scaled dot-product attention in which each query reads only the keys its mask allows."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v).

        scores = queries @ keys^T / sqrt(d), d the query size; weights =
        softmax_with_mask(scores, mask) with mask None, (n_q, n_k) or
        (B, n_q, n_k); store the weights (B, n_q, n_k) in
        self.attention_weights and return dropout(weights) @ values.
        """
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = softmax_with_mask(scores, mask)
        return torch.bmm(self.dropout(self.attention_weights), values)
