"""Exercise 3, written with other names and another order: the temperature multiplies the features."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class AdditiveAttention(nn.Module):
    """Additive attention."""

    def __init__(self, key_size, query_size, num_hiddens, dropout, temperature=1.0):
        super().__init__()
        self.temperature = temperature
        self.dropout = nn.Dropout(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)

    def forward(self, queries, keys, values, valid_lens=None):
        k_proj = self.W_k(keys)
        q_proj = self.W_q(queries)
        hidden = torch.tanh(q_proj.unsqueeze(2) + k_proj.unsqueeze(1))
        hidden = hidden * self.temperature
        logits = self.w_v(hidden).squeeze(-1)
        self.attention_weights = masked_softmax(logits, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)


class DotProductAttention(nn.Module):
    """Scaled dot-product attention."""

    def __init__(self, dropout, temperature=1.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.temperature = temperature

    def forward(self, queries, keys, values, valid_lens=None):
        width = queries.shape[-1]
        scaled_q = queries / self.temperature
        attn_logits = torch.bmm(scaled_q, keys.transpose(1, 2)) / math.sqrt(width)
        self.attention_weights = masked_softmax(attn_logits, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
