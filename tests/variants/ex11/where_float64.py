# style: view/permute splits, a mask built with torch.where and a softmax in float64 cast back; einsum scores
"""Exercise 11."""

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """(B, kv, T, d) -> (B, kv * num_groups, T, d)."""
    if num_groups == 1:
        return X.clone()
    return torch.cat([X[:, j:j + 1].expand(-1, num_groups, -1, -1) for j in range(X.shape[1])], dim=1)


class GroupedQueryAttention(nn.Module):
    """Query heads in groups sharing key/value heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads:
            raise ValueError(f"{num_heads} heads do not divide {num_hiddens}")
        if num_kv_heads <= 0 or num_heads % num_kv_heads:
            raise ValueError(f"{num_kv_heads} key/value heads do not divide {num_heads} heads")
        self.num_heads, self.num_kv_heads, self.d_head = num_heads, num_kv_heads, num_hiddens // num_heads
        kv_size = num_kv_heads * self.d_head
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias)
        self.W_k = nn.Linear(num_hiddens, kv_size, bias)
        self.W_v = nn.Linear(num_hiddens, kv_size, bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias)
        self.dropout = nn.Dropout(dropout)

    def _heads(self, X, n):
        B, T, _ = X.shape
        return X.view(B, T, n, self.d_head).permute(0, 2, 1, 3)

    def _attention(self, q, k, v, valid_lens=None, causal=False):
        B, H, n_q, d = q.shape
        n_k = k.shape[2]
        k = repeat_kv(k, H // k.shape[1])
        v = repeat_kv(v, H // v.shape[1])
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * d ** -0.5
        rows = torch.arange(n_q).view(n_q, 1) + (n_k - n_q)
        cols = torch.arange(n_k).view(1, n_k)
        allowed = (cols <= rows) if causal else torch.ones(n_q, n_k, dtype=torch.bool)
        allowed = allowed.view(1, 1, n_q, n_k)
        if valid_lens is not None:
            allowed = allowed & (cols.view(1, 1, 1, n_k) < valid_lens.view(B, 1, 1, 1))
        scores = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
        weights = torch.softmax(scores.double(), dim=-1).to(q.dtype)
        self.attention_weights = weights
        out = self.dropout(weights) @ v  # (B, H, n_q, d)
        return self.W_o(out.permute(0, 2, 1, 3).reshape(B, n_q, H * d))

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        return self._attention(self._heads(self.W_q(queries), self.num_heads),
                               self._heads(self.W_k(keys), self.num_kv_heads),
                               self._heads(self.W_v(values), self.num_kv_heads), valid_lens, causal)

    def step(self, x, cache=None):
        keys = self._heads(self.W_k(x), self.num_kv_heads)
        values = self._heads(self.W_v(x), self.num_kv_heads)
        if cache is not None:
            old_keys, old_values = cache
            keys = torch.cat((old_keys, keys), dim=-2)
            values = torch.cat((old_values, values), dim=-2)
        queries = self._heads(self.W_q(x), self.num_heads)
        return self._attention(queries, keys, values, causal=True), (keys, values)
