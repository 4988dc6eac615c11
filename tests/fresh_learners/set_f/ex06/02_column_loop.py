# style: python loop over column pairs, float64 table cast to float32
# bug: none
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
        P = torch.zeros(max_len, num_hiddens, dtype=torch.float64)
        i = torch.arange(max_len, dtype=torch.float64)
        for col in range(0, num_hiddens, 2):
            angle = i / (float(base) ** (col / num_hiddens))
            P[:, col] = torch.sin(angle)
            if col + 1 < num_hiddens:
                P[:, col + 1] = torch.cos(angle)
        self.register_buffer("P", P.unsqueeze(0).float(), persistent=False)

    def forward(self, X):
        T = X.size(1)
        if T > self.max_len:
            raise ValueError(f"T = {T} is larger than max_len = {self.max_len}")
        X = X + self.P[:, :T]
        return self.dropout(X)
