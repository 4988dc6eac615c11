# style: expand to the full (B, n_q, n_k, h) grid, @ operator with mT
# bug: DotProductAttention.forward | stores the weights after dropout in self.attention_weights (attn = self.dropout(attn) before storing): in training mode the stored weights are the dropped, rescaled ones
# expect: DotProductAttention.forward | dropout
"""Exercise 3: additive and scaled dot-product attention scoring (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

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
        B, n_q, _ = queries.shape
        n_k = keys.shape[1]
        q = self.W_q(queries).unsqueeze(2).expand(-1, -1, n_k, -1)
        k = self.W_k(keys).unsqueeze(1).expand(-1, n_q, -1, -1)
        scores = self.w_v(torch.tanh(q + k))[..., 0]
        scores = scores / self.temperature
        attn = masked_softmax(scores, valid_lens)
        self.attention_weights = attn
        attn = self.dropout(attn)
        return attn @ values


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = (queries @ keys.mT) / math.sqrt(d)
        scores = scores / self.temperature
        attn = self.dropout(masked_softmax(scores, valid_lens))
        self.attention_weights = attn
        return attn @ values
