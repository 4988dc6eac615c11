# style: private helpers shared by forward and step, causal mask from torch.tril
# bug: GroupedQueryAttention.forward | builds the causal mask as tril(ones(n_q, n_q)), which only fits the scores when n_q == n_k: RuntimeError in forward(causal=True) with n_q != n_k and in step with n > 1 new positions after a non-empty cache
# expect: GroupedQueryAttention.forward | n_q != n_k
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
    return torch.repeat_interleave(X, num_groups, dim=1)


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads, each shared by a group of query heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError(f"num_heads ({num_heads}) must divide num_hiddens ({num_hiddens})")
        if num_heads % num_kv_heads != 0:
            raise ValueError(f"num_kv_heads ({num_kv_heads}) must divide num_heads ({num_heads})")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = num_hiddens // num_heads
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_kv_heads * self.d_head, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_kv_heads * self.d_head, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def _split(self, X, heads):
        B, T, _ = X.shape
        return X.reshape(B, T, heads, self.d_head).transpose(1, 2)

    def _merge(self, X):
        B, H, T, d = X.shape
        return X.transpose(1, 2).reshape(B, T, H * d)

    def _attend(self, q, k, v, valid_lens, causal):
        n_q, n_k = q.shape[2], k.shape[2]
        groups = self.num_heads // self.num_kv_heads
        k, v = repeat_kv(k, groups), repeat_kv(v, groups)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        key_idx = torch.arange(n_k, device=q.device)
        if valid_lens is not None:
            keep = key_idx.view(1, 1, 1, n_k) < valid_lens.view(-1, 1, 1, 1)
            scores = scores.masked_fill(~keep, float("-inf"))
        if causal:
            keep = torch.tril(torch.ones(n_q, n_q, dtype=torch.bool, device=q.device))
            scores = scores.masked_fill(~keep, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        self.attention_weights = weights
        return self._merge(self.dropout(weights) @ v)

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        q = self._split(self.W_q(queries), self.num_heads)
        k = self._split(self.W_k(keys), self.num_kv_heads)
        v = self._split(self.W_v(values), self.num_kv_heads)
        return self.W_o(self._attend(q, k, v, valid_lens, causal))

    def step(self, x, cache=None):
        k_new = self._split(self.W_k(x), self.num_kv_heads)
        v_new = self._split(self.W_v(x), self.num_kv_heads)
        if cache is None:
            k, v = k_new, v_new
        else:
            k = torch.cat((cache[0], k_new), dim=2)
            v = torch.cat((cache[1], v_new), dim=2)
        q = self._split(self.W_q(x), self.num_heads)
        out = self.W_o(self._attend(q, k, v, None, True))
        return out, (k, v)
