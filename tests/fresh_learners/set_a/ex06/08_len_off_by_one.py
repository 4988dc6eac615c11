# style: explicit double loop with math.sin / math.cos
# bug: PositionalEncoding.forward | raises ValueError already when T == max_len (uses >= instead of >)
# expect: PositionalEncoding.forward | max_len
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

import math

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000):
        """Build the table P once and keep it as a buffer.

        P has shape (1, max_len, num_hiddens) with, for position i and
        column pair (2j, 2j + 1):

            P[0, i, 2j]     = sin(i / 10000**(2j / num_hiddens))
            P[0, i, 2j + 1] = cos(i / 10000**(2j / num_hiddens))

        With an odd num_hiddens the last column is a sine. Register it with
        self.register_buffer("P", P, persistent=False) (it is not learned, so
        it stays out of the state_dict).
        """
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        table = [[0.0] * num_hiddens for _ in range(max_len)]
        for pos in range(max_len):
            for col in range(0, num_hiddens, 2):
                angle = pos / 10000 ** (col / num_hiddens)
                table[pos][col] = math.sin(angle)
                if col + 1 < num_hiddens:
                    table[pos][col + 1] = math.cos(angle)
        P = torch.tensor(table, dtype=torch.float32).unsqueeze(0)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        batch_size, num_steps, _ = X.shape
        if num_steps >= self.max_len:
            raise ValueError(
                "input has %d positions but the table only covers max_len=%d"
                % (num_steps, self.max_len)
            )
        return self.dropout(X + self.P[:, :num_steps])
