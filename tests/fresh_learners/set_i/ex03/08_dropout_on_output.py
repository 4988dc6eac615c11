# style: d2l-like with the dropout moved to the end of the block
# bug: DotProductAttention.forward | applies dropout to the pooled output dropout(weights @ values) instead of to the weights before pooling; identical in eval mode, different in training mode
# expect: DotProductAttention.forward | dropout on the weights
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
        queries, keys = self.W_q(queries), self.W_k(keys)
        features = torch.tanh(queries.unsqueeze(2) + keys.unsqueeze(1))
        scores = self.w_v(features).squeeze(-1) / self.temperature
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
        scores = torch.bmm(queries, keys.transpose(1, 2)) / (math.sqrt(d) * self.temperature)
        self.attention_weights = masked_softmax(scores, valid_lens)
        output = torch.bmm(self.attention_weights, values)
        return self.dropout(output)
