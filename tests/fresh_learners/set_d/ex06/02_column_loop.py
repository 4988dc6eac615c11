# style: explicit loop over column pairs, float64 then cast
# bug: none
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

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
        positions = torch.arange(max_len, dtype=torch.float64)
        table = torch.zeros(max_len, num_hiddens, dtype=torch.float64)
        for col in range(0, num_hiddens, 2):
            freq = base ** (col / num_hiddens)
            table[:, col] = torch.sin(positions / freq)
            if col + 1 < num_hiddens:
                table[:, col + 1] = torch.cos(positions / freq)
        self.register_buffer("P", table.unsqueeze(0).float(), persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        batch, steps, _ = X.shape
        if steps > self.max_len:
            raise ValueError(f"T = {steps} exceeds max_len = {self.max_len}")
        pos = self.P[:, :steps]
        return self.dropout(X + pos)
