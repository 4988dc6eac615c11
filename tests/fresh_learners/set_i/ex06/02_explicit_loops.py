# style: explicit Python loops over column pairs, math module, verbose names
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
        table = torch.zeros(1, max_len, num_hiddens, dtype=torch.float64)
        positions = torch.arange(max_len, dtype=torch.float64)
        for col in range(0, num_hiddens, 2):
            # col is 2j
            freq = 1.0 / math.pow(base, col / num_hiddens)
            table[0, :, col] = torch.sin(positions * freq)
            if col + 1 < num_hiddens:
                table[0, :, col + 1] = torch.cos(positions * freq)
        self.register_buffer("P", table.float(), persistent=False)

    def forward(self, X):
        seq_len = X.size(1)
        if seq_len > self.max_len:
            raise ValueError(
                "got a sequence of length %d but the table only has max_len=%d positions"
                % (seq_len, self.max_len)
            )
        pos = self.P[:, :seq_len, :].to(device=X.device, dtype=X.dtype)
        return self.dropout(X + pos)
