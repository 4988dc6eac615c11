# style: explicit python loops with math.sin/cos
# bug: PositionalEncoding.forward | dropout applied to the table P only, then added to X, instead of to the sum
# expect: PositionalEncoding.forward | sum
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

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
        import math
        table = torch.empty(max_len, num_hiddens, dtype=torch.float64)
        for pos in range(max_len):
            for col in range(num_hiddens):
                two_j = col - (col % 2)
                angle = pos / 10000 ** (two_j / num_hiddens)
                if col % 2 == 0:
                    table[pos, col] = math.sin(angle)
                else:
                    table[pos, col] = math.cos(angle)
        self.register_buffer("P", table.to(torch.float32).unsqueeze(0), persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        seq_len = X.size(1)
        if seq_len > self.max_len:
            raise ValueError(
                "input has %d positions but the table only covers max_len=%d" % (seq_len, self.max_len)
            )
        return X + self.dropout(self.P[:, :seq_len])
