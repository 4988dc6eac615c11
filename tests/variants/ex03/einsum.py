# style: torch.einsum everywhere, d ** 0.5, expand for the broadcast
"""Exercise 3 with einsum."""

import math  # noqa: F401

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class AdditiveAttention(nn.Module):
    """Score a query against a key with a one-hidden-layer MLP (Bahdanau)."""

    def __init__(self, key_size, query_size, num_hiddens, dropout, temperature=1.0):
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        q = self.W_q(queries)  # (B, n_q, h)
        k = self.W_k(keys)  # (B, n_k, h)
        n_q, n_k = q.shape[1], k.shape[1]
        f = torch.tanh(q[:, :, None, :].expand(-1, -1, n_k, -1) + k[:, None, :, :].expand(-1, n_q, -1, -1))
        scores = self.w_v(f)[..., 0] / self.temperature
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and the temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / d**0.5 / self.temperature
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
