# style: exp/log frequencies, stack and flatten
# bug: PositionalEncoding.__init__ | exponent uses the pair index j instead of 2j (frequencies 10000**(j/num_hiddens))
# expect: PositionalEncoding.__init__ | 2j
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
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        div_term = torch.exp(
            torch.arange((num_hiddens + 1) // 2, dtype=torch.float32) * (-math.log(10000.0) / num_hiddens)
        )
        angles = position * div_term  # (max_len, ceil(num_hiddens / 2))
        pe = torch.stack((torch.sin(angles), torch.cos(angles)), dim=-1).flatten(1)
        pe = pe[:, :num_hiddens]
        self.register_buffer("P", pe[None], persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        n = X.shape[-2]
        if n > self.max_len:
            raise ValueError(f"T={n} > max_len={self.max_len}")
        pos = self.P.narrow(1, 0, n)
        return self.dropout(X + pos)
