# style: the @ operator, multiply by 1/sqrt(d), F.dropout with self.training
"""Exercise 3 with @ and functional dropout."""

import math

import torch
import torch.nn.functional as F
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
        hidden = torch.tanh(self.W_q(queries).unsqueeze(-2) + self.W_k(keys).unsqueeze(-3))
        scores = self.w_v(hidden).squeeze(dim=3) / self.temperature
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return F.dropout(weights, p=self.dropout.p, training=self.training) @ values


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and the temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        scale = 1.0 / (math.sqrt(queries.size(-1)) * self.temperature)
        scores = (queries @ keys.mT) * scale
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return F.dropout(weights, p=self.dropout.p, training=self.training) @ values
