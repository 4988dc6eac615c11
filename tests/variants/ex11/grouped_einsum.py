# style: einsum over (kv head, group) axes, no repeated keys in the attention; expand + reshape in repeat_kv
"""Exercise 11."""

import math

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """(B, kv, T, d) -> (B, kv * num_groups, T, d): each head repeated in a row."""
    B, kv, T, d = X.shape
    return X[:, :, None].expand(B, kv, num_groups, T, d).reshape(B, kv * num_groups, T, d)


class GroupedQueryAttention(nn.Module):
    """Grouped-query self-attention with a KV cache."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads or num_heads % num_kv_heads:
            raise ValueError("num_heads must divide num_hiddens and num_kv_heads must divide num_heads")
        self.h, self.g = num_heads, num_kv_heads
        self.dh = num_hiddens // num_heads
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_kv_heads * self.dh, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_kv_heads * self.dh, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def heads(self, X, n):
        return X.unflatten(-1, (n, self.dh)).movedim(2, 1)  # (B, n, T, dh)

    def attend(self, q, k, v, valid_lens, causal):
        B, _, n_q, _ = q.shape
        n_k = k.shape[2]
        per = self.h // self.g
        qg = q.reshape(B, self.g, per, n_q, self.dh)  # query head j * per + r is group j, member r
        scores = torch.einsum("bjrqd,bjkd->bjrqk", qg, k) / math.sqrt(self.dh)
        keep = torch.ones(n_q, n_k, dtype=torch.bool)
        if causal:
            keep = torch.ones(n_q, n_k, dtype=torch.bool).tril(n_k - n_q)
        keep = keep.expand(B, n_q, n_k)
        if valid_lens is not None:
            keep = keep & (torch.arange(n_k)[None, None, :] < valid_lens[:, None, None])
        scores = scores.masked_fill(~keep[:, None, None], -1e9)
        weights = torch.softmax(scores, dim=-1)  # (B, g, per, n_q, n_k)
        self.attention_weights = weights.reshape(B, self.h, n_q, n_k)
        out = torch.einsum("bjrqk,bjkd->bjrqd", self.dropout(weights), v).reshape(B, self.h, n_q, self.dh)
        return self.W_o(out.movedim(1, 2).flatten(2))

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        q = self.heads(self.W_q(queries), self.h)
        return self.attend(q, self.heads(self.W_k(keys), self.g), self.heads(self.W_v(values), self.g),
                           valid_lens, causal)

    def step(self, x, cache=None):
        k, v = self.heads(self.W_k(x), self.g), self.heads(self.W_v(x), self.g)
        if cache:
            k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
        return self.attend(self.heads(self.W_q(x), self.h), k, v, None, True), (k, v)
