# style: a loop over the groups of query heads, a mask filled in Python loops, index_select in repeat_kv
"""Exercise 11."""

import math

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """Output head h is X[:, h // num_groups]."""
    index = torch.arange(X.shape[1] * num_groups, device=X.device) // num_groups
    return X.index_select(1, index)


class GroupedQueryAttention(nn.Module):
    """Grouped-query attention."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError("num_heads does not divide num_hiddens")
        if num_heads % num_kv_heads != 0:
            raise ValueError("num_kv_heads does not divide num_heads")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = num_hiddens // num_heads
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_kv_heads * self.d_head, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_kv_heads * self.d_head, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def split(self, X, n):
        B, T, _ = X.shape
        return torch.stack([X[:, :, i * self.d_head:(i + 1) * self.d_head] for i in range(n)], dim=1)

    def run(self, q, k, v, valid_lens, causal):
        B, _, n_q, _ = q.shape
        n_k = k.shape[2]
        group = self.num_heads // self.num_kv_heads
        hidden = torch.zeros(B, n_q, n_k, dtype=torch.bool)
        for i in range(n_q):
            for j in range(n_k):
                if causal and j > i + n_k - n_q:
                    hidden[:, i, j] = True
        if valid_lens is not None:
            for b in range(B):
                hidden[b, :, int(valid_lens[b]):] = True
        all_weights = []
        for j in range(self.num_kv_heads):  # the query heads of group j read key/value head j
            s = q[:, j * group:(j + 1) * group] @ k[:, j:j + 1].transpose(2, 3) / math.sqrt(self.d_head)
            all_weights.append(torch.softmax(s.masked_fill(hidden[:, None], float("-inf")), dim=-1))
        weights = torch.cat(all_weights, dim=1)  # (B, heads, n_q, n_k)
        self.attention_weights = weights
        dropped = self.dropout(weights)
        outs = []
        for j in range(self.num_kv_heads):
            outs.append(dropped[:, j * group:(j + 1) * group] @ v[:, j:j + 1])  # (B, group, n_q, d_head)
        out = torch.cat(outs, dim=1)  # (B, heads, n_q, d_head)
        return self.W_o(torch.cat([out[:, h] for h in range(self.num_heads)], dim=-1))

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        q = self.split(self.W_q(queries), self.num_heads)
        k = self.split(self.W_k(keys), self.num_kv_heads)
        v = self.split(self.W_v(values), self.num_kv_heads)
        return self.run(q, k, v, valid_lens, causal)

    def step(self, x, cache=None):
        new_k = self.split(self.W_k(x), self.num_kv_heads)
        new_v = self.split(self.W_v(x), self.num_kv_heads)
        keys = new_k if cache is None else torch.cat([cache[0], new_k], dim=2)
        values = new_v if cache is None else torch.cat([cache[1], new_v], dim=2)
        out = self.run(self.split(self.W_q(x), self.num_heads), keys, values, None, True)
        return out, (keys, values)
