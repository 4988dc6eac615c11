# style: explicit loop over column pairs with math.sin/cos
# bug: PositionalEncoding.__init__ | loops over num_hiddens // 2 pairs only, so with odd num_hiddens the last (sine) column stays 0
# expect: PositionalEncoding.__init__ | odd
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        """Build the table P once and keep it as a buffer.

        P has shape (1, max_len, num_hiddens) with, for position i and
        column pair (2j, 2j + 1):

            P[0, i, 2j]     = sin(i / base**(2j / num_hiddens))
            P[0, i, 2j + 1] = cos(i / base**(2j / num_hiddens))

        base is 10000 in the published exercise. In a class your exercise
        variant gives you your own base (the Practice page and
        `python -m grader --variant N` show it): write it as the default
        here; the grader builds PositionalEncoding without it.

        With an odd num_hiddens the last column is a sine. Register it with
        self.register_buffer("P", P, persistent=False) (it is not learned, so
        it stays out of the state_dict).
        """
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        table = [[0.0] * num_hiddens for _ in range(max_len)]
        for i in range(max_len):
            for j in range(num_hiddens // 2):
                angle = i / base ** (2 * j / num_hiddens)
                table[i][2 * j] = math.sin(angle)
                table[i][2 * j + 1] = math.cos(angle)
        self.register_buffer("P", torch.tensor(table).unsqueeze(0), persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        batch, steps, hidden = X.shape
        if steps > self.max_len:
            raise ValueError(f"got {steps} positions but max_len is {self.max_len}")
        return self.dropout(X + self.P[:, :steps])
