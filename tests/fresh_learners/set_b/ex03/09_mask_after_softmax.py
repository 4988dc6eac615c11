# style: loop over queries for additive scores, pre-scaled queries with matmul
# bug: DotProductAttention.forward | takes the plain softmax and zeroes the masked keys afterwards, without renormalising the valid ones
# expect: DotProductAttention.forward | after
"""Exercise 3: additive and scaled dot-product attention scoring (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class AdditiveAttention(nn.Module):
    """Score a query against a key with a one-hidden-layer MLP (Bahdanau)."""

    def __init__(self, key_size, query_size, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, v).

        score(q, k) = w_v^T tanh(W_q q + W_k k) for every query-key pair
        (broadcast (B, n_q, 1, h) + (B, 1, n_k, h)), then masked_softmax over
        the keys with valid_lens. Store the weights (B, n_q, n_k) in
        self.attention_weights and return dropout(weights) @ values.
        """
        qh = self.W_q(queries)
        kh = self.W_k(keys)
        score_cols = []
        for i in range(qh.shape[1]):
            pair = torch.tanh(qh[:, i : i + 1, :] + kh)
            score_cols.append(self.w_v(pair).squeeze(-1))
        scores = torch.stack(score_cols, dim=1)
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return torch.matmul(self.dropout(weights), values)


class DotProductAttention(nn.Module):
    """Score by the dot product of query and key, divided by sqrt(d)."""

    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v).

        scores = queries @ keys^T / sqrt(d), with d the query size; then as in
        AdditiveAttention: masked_softmax, store self.attention_weights
        (B, n_q, n_k), return dropout(weights) @ values.
        """
        d_k = queries.shape[-1]
        q_scaled = queries / math.sqrt(d_k)
        scores = torch.matmul(q_scaled, keys.transpose(-2, -1))
        weights = masked_softmax(scores, None)
        if valid_lens is not None:
            lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None]
            key_ids = torch.arange(keys.shape[1], device=keys.device)
            keep = key_ids[None, None, :] < lens[:, :, None]
            weights = weights * keep
        self.attention_weights = weights
        return torch.matmul(self.dropout(weights), values)
