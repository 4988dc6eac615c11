# style: explicit python loops with math.sin/math.cos
# bug: none
"""Exercise 6: sinusoidal positional encoding."""

import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        P = torch.zeros(1, max_len, num_hiddens)
        for i in range(max_len):
            for col in range(num_hiddens):
                two_j = col - (col % 2)
                angle = i / (base ** (two_j / num_hiddens))
                if col % 2 == 0:
                    P[0, i, col] = math.sin(angle)
                else:
                    P[0, i, col] = math.cos(angle)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        num_steps = X.shape[1]
        if num_steps > self.max_len:
            raise ValueError(
                "input has " + str(num_steps) + " positions but max_len is " + str(self.max_len)
            )
        out = X + self.P[:, :num_steps]
        return self.dropout(out)
