# style: python loops, constant base
# bug: PositionalEncoding.__init__ | uses the literal 10000 instead of the base argument
# expect: PositionalEncoding.__init__ | base
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
        table = [[0.0] * num_hiddens for _ in range(max_len)]
        for i in range(max_len):
            for col in range(0, num_hiddens, 2):
                angle = i / (10000 ** (col / num_hiddens))
                table[i][col] = math.sin(angle)
                if col + 1 < num_hiddens:
                    table[i][col + 1] = math.cos(angle)
        P = torch.tensor(table, dtype=torch.float32).unsqueeze(0)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        seq_len = X.size(1)
        if seq_len > self.max_len:
            raise ValueError(f"T={seq_len} exceeds max_len={self.max_len}")
        encoded = X + self.P[:, :seq_len]
        return self.dropout(encoded)
