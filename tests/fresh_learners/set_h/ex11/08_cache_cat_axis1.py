# style: reshape/transpose helpers, cache concatenated on the wrong axis
# bug: GroupedQueryAttention.step | concatenates the cache on axis 1 (the head axis) instead of axis 2, which only runs while t == n and then gives the wrong heads, crashing from the third step.
# expect: GroupedQueryAttention.step | append on axis 2
"""Exercise 11: a cached decoding step with grouped key/value heads (chapter 12)."""

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """(B, num_kv_heads, T, d) -> (B, num_kv_heads * num_groups, T, d), head h = X[:, h // num_groups]."""
    return torch.repeat_interleave(X, num_groups, dim=1)


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads, each shared by a group of query heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError(f"num_heads ({num_heads}) must divide num_hiddens ({num_hiddens})")
        if num_heads % num_kv_heads != 0:
            raise ValueError(f"num_kv_heads ({num_kv_heads}) must divide num_heads ({num_heads})")
        self.num_hiddens = num_hiddens
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
        groups = self.num_heads // self.num_kv_heads
        k = repeat_kv(k, groups)
        v = repeat_kv(v, groups)
        n_q, n_k = q.shape[2], k.shape[2]
        scores = q @ k.transpose(-2, -1) / (self.d_head ** 0.5)
        keep = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device)
        if causal:
            i = torch.arange(n_q, device=q.device)[:, None]
            j = torch.arange(n_k, device=q.device)[None, :]
            keep = keep & (j <= n_k - n_q + i)
        keep = keep[None, None]
        if valid_lens is not None:
            j = torch.arange(n_k, device=q.device)
            keep = keep & (j[None, None, None, :] < valid_lens.to(q.device)[:, None, None, None])
        scores = scores.masked_fill(~keep, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        self.attention_weights = weights
        return self.dropout(weights) @ v

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        q = self._split(self.W_q(queries), self.num_heads)
        k = self._split(self.W_k(keys), self.num_kv_heads)
        v = self._split(self.W_v(values), self.num_kv_heads)
        out = self._attend(q, k, v, valid_lens, causal)
        return self.W_o(self._merge(out))

    def step(self, x, cache=None):
        k_new = self._split(self.W_k(x), self.num_kv_heads)
        v_new = self._split(self.W_v(x), self.num_kv_heads)
        if cache is None:
            keys, values = k_new, v_new
        else:
            keys = torch.cat((cache[0], k_new), dim=1)
            values = torch.cat((cache[1], v_new), dim=1)
        q = self._split(self.W_q(x), self.num_heads)
        out = self._attend(q, keys, values, None, True)
        return self.W_o(self._merge(out)), (keys, values)
