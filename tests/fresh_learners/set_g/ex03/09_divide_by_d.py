# style: bmm with unsqueeze broadcasting
# bug: DotProductAttention.forward | divides the scores by d instead of sqrt(d)
# expect: DotProductAttention.forward | sqrt(d)
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
        q = self.W_q(queries).unsqueeze(2)  # (B, n_q, 1, h)
        k = self.W_k(keys).unsqueeze(1)  # (B, 1, n_k, h)
        features = torch.tanh(q + k)
        scores = self.w_v(features).squeeze(-1)  # (B, n_q, n_k)
        self.attention_weights = masked_softmax(scores, valid_lens, temperature=self.temperature)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / d
        self.attention_weights = masked_softmax(scores, valid_lens, temperature=self.temperature)
        return torch.bmm(self.dropout(self.attention_weights), values)
