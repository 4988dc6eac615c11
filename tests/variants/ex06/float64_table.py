# style: the table built and kept in float64, cast to X's dtype in forward
"""Exercise 6."""


import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        i = torch.arange(max_len, dtype=torch.float64)[:, None]
        two_j = torch.arange(0, num_hiddens, 2, dtype=torch.float64)[None, :]
        angle = i / 10000 ** (two_j / num_hiddens)
        P = torch.empty(1, max_len, num_hiddens, dtype=torch.float64)
        P[0, :, 0::2] = angle.sin()
        P[0, :, 1::2] = angle[:, : num_hiddens // 2].cos()
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"T = {T} > max_len = {self.max_len}")
        return self.dropout(X + self.P[:, :T].to(dtype=X.dtype, device=X.device))
