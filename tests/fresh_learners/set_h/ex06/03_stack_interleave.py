# style: exp-log frequencies, stack sin/cos and flatten to interleave, trim odd column
# bug: none
"""Exercise 6: sinusoidal positional encoding."""

import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        n_pairs = (num_hiddens + 1) // 2
        two_j = 2 * torch.arange(n_pairs, dtype=torch.float64)
        inv_freq = torch.exp(-two_j / num_hiddens * math.log(base))
        positions = torch.arange(max_len, dtype=torch.float64)
        theta = torch.outer(positions, inv_freq)
        table = torch.stack((torch.sin(theta), torch.cos(theta)), dim=-1)  # (L, pairs, 2)
        table = table.reshape(max_len, 2 * n_pairs)[:, :num_hiddens]
        P = table.unsqueeze(0).to(torch.get_default_dtype())
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        _, T, _ = X.shape
        if T > self.max_len:
            raise ValueError(f"T={T} is larger than max_len={self.max_len}")
        return self.dropout(X + self.P[:, :T].to(dtype=X.dtype))
