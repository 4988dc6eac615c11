# style: exp-log frequencies, 1-based positions
# bug: PositionalEncoding.__init__ | positions start at 1 instead of 0
# expect: PositionalEncoding.__init__ | position
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

import torch
from torch import nn

import math


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        n_pairs = (num_hiddens + 1) // 2
        two_j = torch.arange(n_pairs, dtype=torch.float64) * 2
        freqs = torch.exp(-two_j * math.log(base) / num_hiddens)
        positions = torch.arange(1, max_len + 1, dtype=torch.float64)
        theta = positions[:, None] * freqs[None, :]
        table = torch.stack((torch.sin(theta), torch.cos(theta)), dim=-1).flatten(start_dim=1)
        table = table[:, :num_hiddens]
        self.register_buffer("P", table.unsqueeze(0).to(torch.float32), persistent=False)

    def forward(self, X):
        B, T, H = X.shape
        if T > self.max_len:
            raise ValueError(f"got {T} positions but max_len is {self.max_len}")
        pe = self.P[:, :T, :].to(dtype=X.dtype, device=X.device)
        return self.dropout(X + pe)
