# style: d2l-style table with strided slice assignment, float32
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
        P = torch.zeros((1, max_len, num_hiddens))
        angles = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            base, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens
        )
        P[:, :, 0::2] = torch.sin(angles)
        P[:, :, 1::2] = torch.cos(angles[:, :num_hiddens // 2])
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than max_len {self.max_len}")
        X = X + self.P[:, :T, :].to(X.device)
        return self.dropout(X)
