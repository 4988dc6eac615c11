# style: vectorised with pair index j, arange over pairs
# bug: PositionalEncoding.__init__ | the exponent uses j / num_hiddens instead of 2j / num_hiddens.
# expect: PositionalEncoding | exponent 2j over num_hiddens
"""Exercise 6: sinusoidal positional encoding."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        n_pairs = (num_hiddens + 1) // 2
        j = torch.arange(n_pairs, dtype=torch.float32)
        freqs = 1.0 / (base ** (j / num_hiddens))
        i = torch.arange(max_len, dtype=torch.float32)
        angle = i[:, None] * freqs[None, :]
        P = torch.zeros(1, max_len, num_hiddens)
        P[0, :, 0::2] = torch.sin(angle)
        P[0, :, 1::2] = torch.cos(angle[:, : num_hiddens // 2])
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"T={T} exceeds max_len={self.max_len}")
        return self.dropout(X + self.P[:, :T])
