# bug: PE base 1000 instead of 10000
# expect: PositionalEncoding.__init__ | smaller
"""Exercise 6."""

import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        position = torch.arange(max_len).unsqueeze(1).float()
        div_term = torch.exp(torch.arange(0, num_hiddens, 2).float() * (-math.log(1000.0) / num_hiddens))
        angles = position * div_term  # (max_len, ceil(d/2))
        P = torch.zeros(max_len, num_hiddens)
        P[:, 0::2] = torch.sin(angles)
        P[:, 1::2] = torch.cos(angles)[:, : num_hiddens // 2]
        self.register_buffer("P", P.unsqueeze(0), persistent=False)

    def forward(self, X):
        if X.size(1) > self.max_len:
            raise ValueError("X has {} positions but max_len is {}".format(X.size(1), self.max_len))
        return self.dropout(X + self.P[:, : X.size(1)])
