# style: loops over positions filling rows, helper method for the check
# bug: PositionalEncoding.forward | the length check uses >= instead of >, so a sequence of exactly max_len positions raises ValueError although it fits
# expect: PositionalEncoding.forward | T equal to max_len
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        P = torch.zeros(1, max_len, num_hiddens)
        j2 = torch.arange(0, num_hiddens, 2).float()
        denom = base ** (j2 / num_hiddens)
        n_cos = num_hiddens // 2
        for i in range(max_len):
            row = i / denom
            P[0, i, 0::2] = torch.sin(row)
            P[0, i, 1::2] = torch.cos(row[:n_cos])
        self.register_buffer("P", P, persistent=False)

    def _check_len(self, T):
        if T >= self.max_len:
            raise ValueError(f"input has {T} steps, max_len is {self.max_len}")

    def forward(self, X):
        T = X.shape[1]
        self._check_len(T)
        return self.dropout(X + self.P[:, :T, :].to(X.dtype))
