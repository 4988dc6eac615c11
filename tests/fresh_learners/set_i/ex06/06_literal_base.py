# style: compact vectorised, exp/log form of the frequencies
# bug: PositionalEncoding.__init__ | the frequencies use the literal 1000 instead of the base parameter (10000 by default), so every column pair has the wrong wavelength
# expect: PositionalEncoding.__init__ | base
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        position = torch.arange(max_len).unsqueeze(1).float()
        div_term = torch.exp(torch.arange(0, num_hiddens, 2).float() * (-math.log(1000.0) / num_hiddens))
        P = torch.zeros(1, max_len, num_hiddens)
        P[0, :, 0::2] = torch.sin(position * div_term)
        P[0, :, 1::2] = torch.cos(position * div_term)[:, : num_hiddens // 2]
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        if X.size(1) > self.max_len:
            raise ValueError(f"length {X.size(1)} > max_len {self.max_len}")
        return self.dropout(X + self.P[:, : X.size(1)])
