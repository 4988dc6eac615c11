# style: vectorised, unpacking shapes, einsum-free outer via broadcasting
# bug: PositionalEncoding.forward | slices P by X.shape[0] (the batch size) instead of the number of time steps.
# expect: PositionalEncoding.forward | slice by T
"""Exercise 6: sinusoidal positional encoding."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        position = torch.arange(max_len).float().unsqueeze(-1)
        div_term = base ** (torch.arange(0, num_hiddens, 2).float() / num_hiddens)
        P = torch.zeros(1, max_len, num_hiddens)
        P[0, :, 0::2] = torch.sin(position / div_term)
        P[0, :, 1::2] = torch.cos(position / div_term)[:, : num_hiddens // 2]
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        n = X.shape[0]
        if X.shape[1] > self.max_len:
            raise ValueError(f"{X.shape[1]} positions but max_len {self.max_len}")
        return self.dropout(X + self.P[:, :n, :])
