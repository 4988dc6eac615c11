# style: einsum, expand + reshape for repeat_kv, one boolean mask combined with &
# bug: none
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
    B, n_kv, T, d = X.shape
    if num_groups == 1:
        return X.clone()
    return X[:, :, None, :, :].expand(B, n_kv, num_groups, T, d).reshape(B, n_kv * num_groups, T, d)


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads, each shared by a group of query heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads or num_heads % num_kv_heads:
            raise ValueError(
                f"need num_heads | num_hiddens and num_kv_heads | num_heads, "
                f"got {num_hiddens}, {num_heads}, {num_kv_heads}"
            )
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        self.d_head = num_hiddens // num_heads
        kv_width = num_kv_heads * self.d_head
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, kv_width, bias=bias)
        self.W_v = nn.Linear(num_hiddens, kv_width, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, t, n):
        return t.view(t.shape[0], t.shape[1], n, self.d_head).permute(0, 2, 1, 3)

    def _core(self, q, k, v, valid_lens=None, causal=False):
        g = self.num_heads // self.num_kv_heads
        k = repeat_kv(k, g)
        v = repeat_kv(v, g)
        B, H, n_q, d = q.shape
        n_k = k.shape[2]
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d)
        allowed = torch.ones(B, 1, n_q, n_k, dtype=torch.bool, device=q.device)
        j = torch.arange(n_k, device=q.device)
        if valid_lens is not None:
            allowed = allowed & (j[None, None, None, :] < valid_lens[:, None, None, None])
        if causal:
            i = torch.arange(n_q, device=q.device)
            allowed = allowed & (j[None, :] <= (n_k - n_q) + i[:, None])
        s = s.masked_fill(~allowed, float("-inf"))
        w = s.softmax(dim=-1)
        self.attention_weights = w
        o = torch.einsum("bhqk,bhkd->bhqd", self.dropout(w), v)
        return self.W_o(o.permute(0, 2, 1, 3).reshape(B, n_q, H * d))

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        return self._core(
            self._heads(self.W_q(queries), self.num_heads),
            self._heads(self.W_k(keys), self.num_kv_heads),
            self._heads(self.W_v(values), self.num_kv_heads),
            valid_lens,
            causal,
        )

    def step(self, x, cache=None):
        new_k = self._heads(self.W_k(x), self.num_kv_heads)
        new_v = self._heads(self.W_v(x), self.num_kv_heads)
        if cache is not None:
            past_k, past_v = cache
            new_k = torch.cat([past_k, new_k], dim=2)
            new_v = torch.cat([past_v, new_v], dim=2)
        out = self._core(self._heads(self.W_q(x), self.num_heads), new_k, new_v, causal=True)
        return out, (new_k, new_v)
