# style: complex multiplication (torch.polar, view_as_complex), the tables from torch.outer in float32
"""Exercise 9 with complex numbers: pair (x_2j, x_2j+1) is x_2j + i x_2j+1, rotated by e^{i m omega_j}."""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class RotaryEmbedding(nn.Module):
    def __init__(self, num_hiddens, max_len=1000):
        super().__init__()
        self.max_len = max_len
        if num_hiddens % 2 != 0:
            raise ValueError("num_hiddens must be even")
        omega = 1.0 / (10000 ** (torch.arange(0, num_hiddens, 2).float() / num_hiddens))
        angles = torch.outer(torch.arange(max_len).float(), omega)
        self.register_buffer("cos", torch.cos(angles), persistent=False)
        self.register_buffer("sin", torch.sin(angles), persistent=False)

    def forward(self, X, offset=0):
        B, T, d = X.shape
        if offset + T > self.max_len:
            raise ValueError(f"offset + T = {offset + T} > max_len = {self.max_len}")
        turn = torch.complex(self.cos[offset:offset + T], self.sin[offset:offset + T])
        work = torch.float64 if X.dtype == torch.float64 else torch.float32  # complex numbers need one of these
        turn = turn.to(torch.complex128 if work == torch.float64 else torch.complex64)
        z = torch.view_as_complex(X.to(work).reshape(B, T, d // 2, 2).contiguous())
        return torch.view_as_real(z * turn).reshape(B, T, d).to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q, k = self.rotary(queries), self.rotary(keys)
        scores = q @ k.transpose(1, 2) / math.sqrt(queries.shape[-1])
        self.attention_weights = masked_softmax(scores, valid_lens)
        return self.dropout(self.attention_weights) @ values
