# style: einsum for every contraction, named shape comments
# bug: none
"""Exercise 3: additive and scaled dot-product attention scoring (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class AdditiveAttention(nn.Module):
    """Score a query against a key with a one-hidden-layer MLP (Bahdanau)."""

    def __init__(self, key_size, query_size, num_hiddens, dropout, temperature=1.0):
        """temperature as in DotProductAttention: your variant's default here too."""
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, v).

        score(q, k) = w_v^T tanh(W_q q + W_k k) / temperature.
        """
        q_h = self.W_q(queries)                                   # (B, n_q, h)
        k_h = self.W_k(keys)                                      # (B, n_k, h)
        hidden = torch.tanh(q_h[:, :, None, :] + k_h[:, None, :, :])   # (B, n_q, n_k, h)
        v = self.w_v.weight[0]                                    # (h,)
        scores = torch.einsum("bqkh,h->bqk", hidden, v) / self.temperature
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        """The default temperature is 1.0 in the published exercise. In a
        class your exercise variant gives you your own default (the Practice
        page and `python -m grader --variant N` show it): write it as the
        default here; the grader builds DotProductAttention without it."""
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v)."""
        scale = 1.0 / (math.sqrt(queries.size(-1)) * self.temperature)
        scores = torch.einsum("bqd,bkd->bqk", queries, keys) * scale
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.einsum("bqk,bkv->bqv", self.dropout(weights), values)
