# style: python loops over batch items
# bug: DotProductAttention.forward | scales by sqrt(n_k) (keys.shape[1]) instead of sqrt(d), the query size
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
        qh = self.W_q(queries)
        kh = self.W_k(keys)
        B, n_q, n_k = qh.shape[0], qh.shape[1], kh.shape[1]
        scores = queries.new_empty(B, n_q, n_k)
        for i in range(n_q):
            for j in range(n_k):
                hid = torch.tanh(qh[:, i] + kh[:, j])  # (B, h)
                scores[:, i, j] = self.w_v(hid)[:, 0]
        weights = masked_softmax(scores, valid_lens, temperature=self.temperature)
        self.attention_weights = weights
        out = torch.zeros(B, n_q, values.shape[-1], dtype=values.dtype)
        dropped = self.dropout(weights)
        for j in range(n_k):
            out = out + dropped[:, :, j:j + 1] * values[:, j:j + 1, :]
        return out


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        B, n_q, d = queries.shape
        scores = torch.stack([queries[b] @ keys[b].T for b in range(B)]) / math.sqrt(keys.shape[1])
        weights = masked_softmax(scores, valid_lens, temperature=self.temperature)
        self.attention_weights = weights
        dropped = self.dropout(weights)
        return torch.stack([dropped[b] @ values[b] for b in range(B)])
