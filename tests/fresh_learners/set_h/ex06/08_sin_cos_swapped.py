# style: loop over column pairs, vectorised over positions
# bug: PositionalEncoding.__init__ | even columns get the cosine and odd columns the sine (swapped).
# expect: PositionalEncoding | sine on even columns
"""Exercise 6: sinusoidal positional encoding."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        P = torch.zeros(1, max_len, num_hiddens)
        i = torch.arange(max_len, dtype=torch.float32)
        for c in range(0, num_hiddens, 2):
            angle = i / (base ** (c / num_hiddens))
            P[0, :, c] = torch.cos(angle)
            if c + 1 < num_hiddens:
                P[0, :, c + 1] = torch.sin(angle)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"length {T} is more than max_len {self.max_len}")
        return self.dropout(X + self.P[:, :T])
