# style: vectorised with torch.pow, precomputed denominators
# bug: PositionalEncoding.__init__ | the formula uses the literal 10000 instead of the base parameter.
# expect: PositionalEncoding | base hard-coded 10000
"""Exercise 6: sinusoidal positional encoding."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        P = torch.zeros((1, max_len, num_hiddens))
        i = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        denom = torch.pow(10000, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        X = i / denom
        P[:, :, 0::2] = torch.sin(X)
        P[:, :, 1::2] = torch.cos(X[:, : num_hiddens // 2])
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"T ({T}) > max_len ({self.max_len})")
        return self.dropout(X + self.P[:, :T, :])
