# style: an explicit 2x2 rotation matrix per position and pair, applied with einsum; float64 tables
"""Exercise 9 with one 2x2 rotation matrix per (position, pair)."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class RotaryEmbedding(nn.Module):
    def __init__(self, num_hiddens, max_len=1000):
        super().__init__()
        self.max_len = max_len
        if num_hiddens % 2:
            raise ValueError(f"num_hiddens={num_hiddens} is odd")
        j = torch.arange(num_hiddens // 2, dtype=torch.float64)
        omega = torch.pow(10000.0, -2 * j / num_hiddens)
        m = torch.arange(max_len, dtype=torch.float64)
        angles = m[:, None] * omega[None, :]
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError("sequence does not fit in max_len")
        c = self.cos[offset:offset + T]
        s = self.sin[offset:offset + T]
        R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2).to(X.dtype)  # (T, d/2, 2, 2)
        pairs = X.unflatten(-1, (-1, 2))  # (B, T, d/2, 2)
        return torch.einsum("tjab,ntjb->ntja", R, pairs).flatten(-2)


class RotaryDotProductAttention(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.einsum("bqd,bkd->bqk", self.rotary(queries), self.rotary(keys)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
