# style: torch.outer of positions and inverse frequencies in log space, stack + flatten to interleave
# bug: none
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
        two_j = torch.arange(0, num_hiddens, 2, dtype=torch.float64)
        inv_freq = torch.exp(-math.log(base) * two_j / num_hiddens)
        angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
        # (max_len, ceil(h/2), 2) -> (max_len, 2*ceil(h/2)), then drop the extra cosine if h is odd
        pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(1)[:, :num_hiddens]
        self.register_buffer("P", pe.unsqueeze(0).to(torch.get_default_dtype()), persistent=False)

    def forward(self, X):
        n = X.shape[1]
        if n > self.max_len:
            raise ValueError(f"T={n} exceeds max_len={self.max_len}")
        return self.dropout(X + self.P[:, :n])
