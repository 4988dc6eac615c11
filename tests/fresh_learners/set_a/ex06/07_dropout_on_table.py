# style: exp/log frequencies, stack + flatten to interleave
# bug: PositionalEncoding.forward | dropout applied to the positional table before the addition instead of to the sum
# expect: PositionalEncoding.forward | sum
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
        num_pairs = (num_hiddens + 1) // 2
        two_j = 2 * torch.arange(num_pairs, dtype=torch.float64)
        inv_freq = torch.exp(-math.log(10000.0) * two_j / num_hiddens)
        positions = torch.arange(max_len, dtype=torch.float64)
        angles = positions[:, None] * inv_freq[None, :]              # (max_len, num_pairs)
        table = torch.stack((angles.sin(), angles.cos()), dim=-1)    # (max_len, num_pairs, 2)
        table = table.flatten(1)[:, :num_hiddens]                    # sin, cos, sin, cos, ...
        self.register_buffer("P", table.unsqueeze(0).float(), persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        seq_len = X.size(1)
        if seq_len > self.max_len:
            raise ValueError(f"T={seq_len} exceeds max_len={self.max_len}")
        pos = self.P.narrow(1, 0, seq_len)
        return X + self.dropout(pos)
