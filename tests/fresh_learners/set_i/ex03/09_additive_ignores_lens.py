# style: view/reshape based, explicit shapes unpacked first
# bug: AdditiveAttention.forward | normalises with the plain softmax(energy, dim=-1) instead of masked_softmax(energy, valid_lens), so valid_lens is ignored and padded keys still get weight
# expect: AdditiveAttention.forward | valid_lens mask
"""Exercise 3: additive and scaled dot-product attention scoring (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax, softmax


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
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, v)."""
        batch, n_q, _ = queries.shape
        n_k = keys.shape[1]
        qh = self.W_q(queries).reshape(batch, n_q, 1, -1)
        kh = self.W_k(keys).reshape(batch, 1, n_k, -1)
        energy = self.w_v(torch.tanh(qh + kh)).reshape(batch, n_q, n_k)
        energy = energy / self.temperature
        weights = softmax(energy, dim=-1)
        self.attention_weights = weights
        return torch.bmm(self.dropout(weights), values)


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
        batch, n_q, d = queries.shape
        n_k = keys.shape[1]
        scores = torch.bmm(queries, keys.reshape(batch, n_k, d).transpose(1, 2))
        scores = scores / (math.sqrt(d) * self.temperature)
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.bmm(self.dropout(weights), values)
