# style: exp-log frequencies, sin block then cos block
# bug: PositionalEncoding.__init__ | concatenates all sines then all cosines (blocked halves) instead of interleaving them in column pairs
# expect: PositionalEncoding.__init__ | interleav
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
        half = (num_hiddens + 1) // 2
        div_term = torch.exp(torch.arange(half, dtype=torch.float32) * (-2.0 * math.log(base) / num_hiddens))
        position = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        phase = position * div_term.unsqueeze(0)
        pe = torch.cat((torch.sin(phase), torch.cos(phase)), dim=-1)
        pe = pe[:, :num_hiddens]
        self.register_buffer("P", pe.unsqueeze(0), persistent=False)

    def forward(self, X):
        """X (B, T, num_hiddens) -> dropout(X + P[:, :T]), same shape.

        Raise a ValueError that names both numbers when T > max_len.
        """
        seq_len = X.size(1)
        if seq_len > self.max_len:
            raise ValueError(
                "input has {} positions but the table only covers max_len={}".format(seq_len, self.max_len)
            )
        out = X + self.P[:, :seq_len, :]
        return self.dropout(out)
