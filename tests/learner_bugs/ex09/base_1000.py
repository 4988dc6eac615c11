# bug: frequency base 1000 instead of 10000
# expect: RotaryEmbedding.__init__ | smaller
# style: a loop over the column pairs writing into a clone, the angles from math in Python floats
"""Exercise 9 with a loop over the pairs."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class RotaryEmbedding(nn.Module):
    def __init__(self, num_hiddens, max_len=1000):
        super().__init__()
        self.max_len = max_len
        if num_hiddens % 2 == 1:
            raise ValueError("odd num_hiddens")
        cos = torch.zeros(max_len, num_hiddens // 2)
        sin = torch.zeros(max_len, num_hiddens // 2)
        for j in range(num_hiddens // 2):
            omega = 1 / 1000 ** (2 * j / num_hiddens)
            for m in range(max_len):
                cos[m, j] = math.cos(m * omega)
                sin[m, j] = math.sin(m * omega)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if T + offset > self.max_len:
            raise ValueError("too long for max_len")
        out = X.clone()
        for j in range(X.shape[-1] // 2):
            c = self.cos[offset:offset + T, j].to(X.dtype)[None, :]
            s = self.sin[offset:offset + T, j].to(X.dtype)[None, :]
            a, b = X[:, :, 2 * j], X[:, :, 2 * j + 1]
            out[:, :, 2 * j] = a * c - b * s
            out[:, :, 2 * j + 1] = a * s + b * c
        return out


class RotaryDotProductAttention(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q = self.rotary(queries)
        k = self.rotary(keys)
        w = masked_softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1]), valid_lens)
        self.attention_weights = w
        return torch.bmm(self.dropout(w), values)
