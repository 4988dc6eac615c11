# style: python loops, in-place add in forward
# bug: PositionalEncoding.forward | adds in place (X += P[:, :T]): RuntimeError for a leaf X with requires_grad=True (and it changes the input X); runs for plain tensors
# expect: PositionalEncoding.forward | in place
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
        rows = []
        for i in range(max_len):
            row = []
            for col in range(num_hiddens):
                two_j = col - (col % 2)
                angle = i / base ** (two_j / num_hiddens)
                row.append(math.sin(angle) if col % 2 == 0 else math.cos(angle))
            rows.append(row)
        P = torch.tensor(rows, dtype=torch.float32).reshape(1, max_len, num_hiddens)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} exceeds max_len {self.max_len}")
        X += self.P[:, :T, :].to(X.device)
        return self.dropout(X)
