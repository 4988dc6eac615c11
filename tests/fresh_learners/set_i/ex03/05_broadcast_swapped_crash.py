# style: einsum-ish, explicit [:, None] indexing
# bug: AdditiveAttention.forward | broadcasts queries[:, None] + keys[:, :, None], giving (B, n_k, n_q, h) scores with keys on axis 1: masked_softmax then normalises over queries and the final matmul crashes when n_q != n_k (wrong, transposed weights when n_q == n_k)
# expect: AdditiveAttention.forward | (B, n_q, 1, h) broadcast
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
        q = self.W_q(queries)
        k = self.W_k(keys)
        h = torch.tanh(q[:, None] + k[:, :, None])
        scores = self.w_v(h)[..., 0] / self.temperature
        attn = masked_softmax(scores, valid_lens)
        self.attention_weights = attn
        return torch.matmul(self.dropout(attn), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d) and by a temperature."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v)."""
        scores = torch.matmul(queries, keys.mT) / (math.sqrt(queries.shape[-1]) * self.temperature)
        attn = masked_softmax(scores, valid_lens)
        self.attention_weights = attn
        return torch.matmul(self.dropout(attn), values)
