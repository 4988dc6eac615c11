# style: vectorised, moves valid_lens to the scores' device before masking
# bug: DotProductAttention.forward | calls valid_lens.to(scores.device) unconditionally, so valid_lens=None (the default) raises AttributeError
# expect: DotProductAttention.forward | valid_lens None
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
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, v)."""
        query_part = self.W_q(queries).unsqueeze(2)      # (B, n_q, 1, h)
        key_part = self.W_k(keys).unsqueeze(1)           # (B, 1, n_k, h)
        scores = self.w_v(torch.tanh(query_part + key_part)).squeeze(-1)
        scores = scores / self.temperature
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


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
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.permute(0, 2, 1)) / (math.sqrt(d) * self.temperature)
        valid_lens = valid_lens.to(scores.device)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
