# style: einsum for scores and pooling
# bug: none
"""Exercise 3: additive and scaled dot-product attention scoring (chapter 3)."""

import math

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
        q = self.W_q(queries)                      # (B, n_q, h)
        k = self.W_k(keys)                         # (B, n_k, h)
        hidden = torch.tanh(q[:, :, None, :] + k[:, None, :, :])
        scores = torch.einsum("bqkh,h->bqk", hidden, self.w_v.weight[0]) / self.temperature
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        scale = queries.size(-1) ** 0.5 * self.temperature
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) / scale
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)
