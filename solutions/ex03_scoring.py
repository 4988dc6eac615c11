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
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, v)."""
        projected_q = self.W_q(queries)  # (B, n_q, h)
        projected_k = self.W_k(keys)  # (B, n_k, h)
        # Every query meets every key by broadcasting.
        features = torch.tanh(projected_q.unsqueeze(2) + projected_k.unsqueeze(1))  # (B, n_q, n_k, h)
        features = features / self.temperature  # (B, n_q, n_k, h): w_v has no bias, so every score is divided
        scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature.

    The default temperature is 1.0 in the published exercise; a class variant gives each learner their own
    (course/common/exercise_variants.py)."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature  # every score is divided by it: > 1 flattens the weights, < 1 sharpens

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v)."""
        d = queries.shape[-1]
        queries = queries / self.temperature  # (B, n_q, d): divides every score by the temperature
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)
