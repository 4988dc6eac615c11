"""Exercise 11: a cached decoding step with grouped key/value heads (chapter 12, "KV cache and grouped-query
attention").

A decoder that writes one token at a time recomputes nothing it has seen: it
keeps the projected keys and values of every earlier position (the KV cache)
and, per step, projects only the new position and lets its query read the
cache. Grouped-query attention (Ainslie et al. 2023) makes that cache smaller:
the queries keep num_heads heads, but keys and values get only num_kv_heads
heads, each shared by a group of num_heads / num_kv_heads consecutive query
heads (num_kv_heads = 1 is Shazeer's multi-query attention, num_kv_heads =
num_heads ordinary multi-head attention).
"""

import math

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """Give every query head its key/value head: (B, num_kv_heads, T, d) -> (B, num_kv_heads * num_groups, T, d).

    Key/value head j serves the num_groups consecutive query heads
    j * num_groups .. (j + 1) * num_groups - 1, so output head h is
    X[:, h // num_groups]: head 0 repeated num_groups times, then head 1, ...
    (not the whole stack of heads tiled num_groups times, which would give
    query head h the key/value head h % num_kv_heads). Returns a new tensor of
    X's dtype; num_groups = 1 gives X's values unchanged.
    """
    return torch.repeat_interleave(X, num_groups, dim=1)  # (B, kv_heads * groups, T, d)


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads, each shared by a group of query heads.

    num_kv_heads is 2 in the published exercise; in a class your exercise
    variant gives you your own default (the Practice page and
    `python -m grader --variant N` show it): write it as the default here; the
    grader builds GroupedQueryAttention without it where it checks the default.
    """

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        """Four projections and a dropout on the attention weights.

        d_head = num_hiddens / num_heads. W_q and W_o are
        nn.Linear(num_hiddens, num_hiddens, bias=bias); W_k and W_v are
        nn.Linear(num_hiddens, num_kv_heads * d_head, bias=bias): the keys and
        values have num_kv_heads heads of d_head each (the attribute names
        matter: the grader loads its weights into them). self.dropout =
        nn.Dropout(dropout) acts on the attention weights.
        Raise ValueError when num_heads does not divide num_hiddens or
        num_kv_heads does not divide num_heads.
        """
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError(f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads})")
        if num_kv_heads < 1 or num_heads % num_kv_heads != 0:
            raise ValueError(f"num_kv_heads ({num_kv_heads}) must divide num_heads ({num_heads}): "
                             "each key/value head serves num_heads / num_kv_heads query heads")
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.d_head = num_hiddens // num_heads
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_kv_heads * self.d_head, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_kv_heads * self.d_head, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def _split(self, X, heads):
        """(B, T, heads * d_head) -> (B, heads, T, d_head); head h is columns h * d_head .. (h + 1) * d_head - 1."""
        B, T, _ = X.shape
        return X.reshape(B, T, heads, self.d_head).transpose(1, 2)  # (B, heads, T, d_head)

    def _attend(self, q, k, v, valid_lens, causal):
        """q (B, heads, n_q, d_head), k and v (B, kv_heads, n_k, d_head) -> (B, n_q, num_hiddens)."""
        n_q, n_k = q.shape[2], k.shape[2]
        groups = self.num_heads // self.num_kv_heads
        k, v = repeat_kv(k, groups), repeat_kv(v, groups)  # (B, heads, n_k, d_head)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.d_head)  # (B, heads, n_q, n_k)
        key_index = torch.arange(n_k, device=q.device)  # (n_k,)
        visible = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device)[None, None]  # (1, 1, n_q, n_k)
        if causal:
            # query i stands at position n_k - n_q + i: the cached positions come before it
            query_position = torch.arange(n_q, device=q.device) + (n_k - n_q)  # (n_q,)
            visible = visible & (key_index[None, :] <= query_position[:, None])  # (1, 1, n_q, n_k)
        if valid_lens is not None:
            visible = visible & (key_index < valid_lens.reshape(-1, 1, 1, 1))  # (B, 1, n_q, n_k)
        scores = scores.masked_fill(~visible, float("-inf"))
        self.attention_weights = torch.softmax(scores, dim=-1)  # (B, heads, n_q, n_k)
        out = self.dropout(self.attention_weights) @ v  # (B, heads, n_q, d_head)
        out = out.transpose(1, 2).flatten(2)  # (B, n_q, heads * d_head)
        return self.W_o(out)  # (B, n_q, num_hiddens)

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        """queries (B, n_q, num_hiddens), keys and values (B, n_k, num_hiddens) -> (B, n_q, num_hiddens).

        1. project with W_q, W_k, W_v and split into heads: the queries into
           num_heads, the keys and values into num_kv_heads, each
           (B, T, heads * d_head) -> (B, heads, T, d_head), head h being the
           columns h * d_head .. (h + 1) * d_head - 1 (reshape to
           (B, T, heads, d_head), then move the head axis next to the batch)
        2. repeat_kv the keys and values to num_heads heads: query head h
           reads key/value head h // (num_heads // num_kv_heads)
        3. scores = q @ k^T / sqrt(d_head), per head: (B, num_heads, n_q, n_k)
        4. masks (a masked score becomes -inf, so its weight is exactly 0):
           - valid_lens: None, or (B,) integers in 1 .. n_k: example b reads
             the keys j < valid_lens[b] only, in every head
           - causal=True: query i stands at position n_k - n_q + i (keys
             before the queries are earlier positions, as in a cache) and
             reads the keys j <= n_k - n_q + i only; for n_q == n_k, j <= i
        5. weights = softmax over the keys, stored as self.attention_weights
           (B, num_heads, n_q, n_k); dropout(weights) @ values, heads merged
           back to (B, n_q, num_hiddens) (the inverse of step 1), then W_o
        """
        q = self._split(self.W_q(queries), self.num_heads)  # (B, heads, n_q, d_head)
        k = self._split(self.W_k(keys), self.num_kv_heads)  # (B, kv_heads, n_k, d_head)
        v = self._split(self.W_v(values), self.num_kv_heads)  # (B, kv_heads, n_k, d_head)
        return self._attend(q, k, v, valid_lens, causal)  # (B, n_q, num_hiddens)

    def step(self, x, cache=None):
        """One decoding step of self-attention with the KV cache: x (B, n, num_hiddens) holds the inputs at
        the next n positions (n = 1 when decoding token by token).

        cache: None before the first step, else the (keys, values) pair the
        previous step returned: keys and values each
        (B, num_kv_heads, t, d_head), the W_k and W_v projections of the t
        earlier positions' inputs split into key/value heads (as in forward,
        step 1), positions in order on axis 2.

        1. project x with W_k and W_v, split into num_kv_heads heads and
           append them to the cache on the position axis (axis 2):
           (B, num_kv_heads, t + n, d_head). The cache holds projected keys
           and values, never the inputs: no earlier position is projected
           again.
        2. the new positions' queries (W_q(x), num_heads heads) attend as in
           forward with causal=True over all t + n cached positions: each
           new position reads the earlier ones and itself (append before
           attending), never a later one.
        3. self.attention_weights is (B, num_heads, n, t + n).

        Returns (output (B, n, num_hiddens), (keys, values)), the cache grown
        by n positions; the cache given is not modified in place. Step by
        step, the outputs equal forward(X, X, X, causal=True) on the whole
        sequence X, position by position.
        """
        k = self._split(self.W_k(x), self.num_kv_heads)  # (B, kv_heads, n, d_head): projected once, kept
        v = self._split(self.W_v(x), self.num_kv_heads)  # (B, kv_heads, n, d_head)
        if cache is not None:
            k = torch.cat((cache[0], k), dim=2)  # (B, kv_heads, t + n, d_head): positions in order
            v = torch.cat((cache[1], v), dim=2)  # (B, kv_heads, t + n, d_head)
        q = self._split(self.W_q(x), self.num_heads)  # (B, heads, n, d_head)
        return self._attend(q, k, v, None, True), (k, v)  # the new positions read the cache and themselves
