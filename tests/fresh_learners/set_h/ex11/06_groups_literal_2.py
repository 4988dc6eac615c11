# style: einsum scores, group count written with the published default
# bug: GroupedQueryAttention._core | computes the group size as num_heads // 2 (the published num_kv_heads typed in) instead of num_heads // num_kv_heads.
# expect: GroupedQueryAttention | num_heads // num_kv_heads
"""Exercise 11: a cached decoding step with grouped key/value heads (chapter 12)."""

import math

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """(B, num_kv_heads, T, d) -> (B, num_kv_heads * num_groups, T, d)."""
    B, kv, T, d = X.shape
    out = X[:, :, None, :, :].expand(B, kv, num_groups, T, d).reshape(B, kv * num_groups, T, d)
    return out.clone()


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads:
            raise ValueError("num_heads must divide num_hiddens")
        if num_heads % num_kv_heads:
            raise ValueError("num_kv_heads must divide num_heads")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = num_hiddens // num_heads
        kv_width = num_kv_heads * self.d_head
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, kv_width, bias=bias)
        self.W_v = nn.Linear(num_hiddens, kv_width, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, X, n_heads):
        B, T, _ = X.shape
        return X.view(B, T, n_heads, self.d_head).permute(0, 2, 1, 3)

    def _core(self, q, k, v, valid_lens=None, causal=False):
        g = self.num_heads // 2  # two kv heads
        k, v = repeat_kv(k, g), repeat_kv(v, g)
        B, H, n_q, d = q.shape
        n_k = k.shape[2]
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d)
        bias = torch.zeros(B, 1, n_q, n_k, dtype=scores.dtype, device=scores.device)
        key_idx = torch.arange(n_k, device=scores.device)
        if valid_lens is not None:
            too_far = key_idx.view(1, 1, 1, n_k) >= valid_lens.view(B, 1, 1, 1)
            bias = bias.masked_fill(too_far, float("-inf"))
        if causal:
            q_pos = torch.arange(n_q, device=scores.device).view(n_q, 1) + (n_k - n_q)
            future = key_idx.view(1, n_k) > q_pos
            bias = bias.masked_fill(future.view(1, 1, n_q, n_k), float("-inf"))
        weights = torch.softmax(scores + bias, dim=-1)
        self.attention_weights = weights
        ctx = torch.einsum("bhqk,bhkd->bhqd", self.dropout(weights), v)
        return ctx.permute(0, 2, 1, 3).reshape(B, n_q, H * d)

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        q = self._heads(self.W_q(queries), self.num_heads)
        k = self._heads(self.W_k(keys), self.num_kv_heads)
        v = self._heads(self.W_v(values), self.num_kv_heads)
        return self.W_o(self._core(q, k, v, valid_lens, causal))

    def step(self, x, cache=None):
        k = self._heads(self.W_k(x), self.num_kv_heads)
        v = self._heads(self.W_v(x), self.num_kv_heads)
        if cache is not None:
            past_k, past_v = cache
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        q = self._heads(self.W_q(x), self.num_heads)
        return self.W_o(self._core(q, k, v, causal=True)), (k, v)
