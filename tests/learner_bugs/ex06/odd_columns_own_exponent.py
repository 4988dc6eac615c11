# bug: cosine columns use their own index in the exponent
# expect: PositionalEncoding.__init__ | exponent
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
        rows = []
        for i in range(max_len):
            row = []
            for col in range(num_hiddens):
                two_j = col
                angle = i / 10000 ** (two_j / num_hiddens)
                row.append(math.sin(angle) if col % 2 == 0 else math.cos(angle))
            rows.append(row)
        self.register_buffer("P", torch.tensor([rows]), persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"{T} > {self.max_len}")
        return self.dropout(X + self.P[:, :T].type_as(X))
