# style: loops over queries and keys filling a preallocated score tensor
# bug: AdditiveAttention.forward | the scores are written into torch.zeros(B, n_q, n_k) (default float32), so the weights are float32 and torch.bmm with float64 values raises a dtype error; runs for float32 inputs
# expect: AdditiveAttention.forward | dtype
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
        q = self.W_q(queries)
        k = self.W_k(keys)
        scores = torch.zeros(B, n_q, n_k, device=queries.device)
        for i in range(n_q):
            for j in range(n_k):
                h = torch.tanh(q[:, i] + k[:, j])  # (B, num_hiddens)
                scores[:, i, j] = self.w_v(h)[:, 0] / self.temperature
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.permute(0, 2, 1)) / (d ** 0.5 * self.temperature)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
