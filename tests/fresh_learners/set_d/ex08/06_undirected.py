# style: explicit loops, symmetric neighbour sets
# bug: graph_mask | makes the graph symmetric (OR with its transpose), so a directed edge i -> j also lets j read i
# expect: graph_mask | direct
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
        raise ValueError("half_width cannot be negative")
    mask = torch.zeros(num_queries, num_keys, dtype=torch.bool)
    reach = half_width * dilation
    for q in range(num_queries):
        for k in range(num_keys):
            offset = q - k
            if causal and k > q:
                continue
            if abs(offset) <= reach and offset % dilation == 0:
                mask[q, k] = True
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
    rows, cols = adjacency.shape[-2], adjacency.shape[-1]
    if rows != cols:
        raise ValueError(f"adjacency is {rows} x {cols}, not square")
    allowed = adjacency.ne(0) | adjacency.ne(0).transpose(-1, -2)
    if self_loops:
        for node in range(rows):
            allowed[..., node, node] = True
    return allowed


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
    if mask.dim() == 2:
        mask = mask.unsqueeze(0).expand_as(X)
    filled = torch.where(mask, X, torch.full_like(X, -1e9))
    probs = softmax(filled, dim=-1)
    probs = probs * mask.to(probs.dtype)
    has_key = mask.any(dim=-1, keepdim=True)
    return torch.where(has_key, probs, torch.zeros_like(probs))


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
        d = queries.size(-1)
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / math.sqrt(d)
        weights = softmax_with_mask(scores, mask)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)
