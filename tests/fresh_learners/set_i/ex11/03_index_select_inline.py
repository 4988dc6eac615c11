# style: index_select for repeat_kv, everything written inline in forward, step reuses forward-like code via a flag
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
    n_kv = X.shape[1]
    # query head h reads kv head h // num_groups
    idx = torch.arange(n_kv * num_groups, device=X.device) // num_groups
    return X.index_select(1, idx)


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads, each shared by a group of query heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError("num_hiddens must be a multiple of num_heads")
        if num_heads % num_kv_heads != 0:
            raise ValueError("num_heads must be a multiple of num_kv_heads")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.num_hiddens = num_hiddens
        d_head = num_hiddens // num_heads
        self.d_head = d_head
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_kv_heads * d_head, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_kv_heads * d_head, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def _project_kv(self, inputs_k, inputs_v):
        B, T, _ = inputs_k.shape
        k = self.W_k(inputs_k).reshape(B, T, self.num_kv_heads, self.d_head).permute(0, 2, 1, 3)
        v = self.W_v(inputs_v).reshape(B, T, self.num_kv_heads, self.d_head).permute(0, 2, 1, 3)
        return k, v

    def _attention(self, queries, k, v, valid_lens, causal):
        B, n_q, _ = queries.shape
        n_k = k.shape[2]
        q = self.W_q(queries).reshape(B, n_q, self.num_heads, self.d_head).permute(0, 2, 1, 3)
        group = self.num_heads // self.num_kv_heads
        k_all = repeat_kv(k, group)
        v_all = repeat_kv(v, group)
        scores = torch.matmul(q, k_all.transpose(2, 3)) / math.sqrt(self.d_head)
        neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
        cols = torch.arange(n_k, device=scores.device)
        if valid_lens is not None:
            scores = torch.where(cols < valid_lens.reshape(B, 1, 1, 1), scores, neg_inf)
        if causal:
            rows = torch.arange(n_q, device=scores.device).unsqueeze(1)
            scores = torch.where(cols.unsqueeze(0) <= rows + (n_k - n_q), scores, neg_inf)
        attn = torch.softmax(scores, dim=3)
        self.attention_weights = attn
        ctx = torch.matmul(self.dropout(attn), v_all)
        ctx = ctx.permute(0, 2, 1, 3).reshape(B, n_q, self.num_hiddens)
        return self.W_o(ctx)

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        k, v = self._project_kv(keys, values)
        return self._attention(queries, k, v, valid_lens, causal)

    def step(self, x, cache=None):
        k, v = self._project_kv(x, x)
        if cache is not None:
            k = torch.cat((cache[0], k), dim=2)
            v = torch.cat((cache[1], v), dim=2)
        return self._attention(x, k, v, None, True), (k, v)
