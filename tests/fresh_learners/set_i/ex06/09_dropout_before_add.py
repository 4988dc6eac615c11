# style: vectorised, einsum for the angle table
# bug: PositionalEncoding.forward | applies dropout to the embeddings X before adding P (dropout(X) + P) instead of dropout(X + P), so in training mode P is never dropped
# expect: PositionalEncoding.forward | dropout after adding P
"""Exercise 6: sinusoidal positional encoding (chapter 6, "Self-attention and
positional encoding")."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        pos = torch.arange(max_len, dtype=torch.float32)
        inv = torch.pow(float(base), -torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        ang = torch.einsum("i,j->ij", pos, inv)
        P = torch.zeros(1, max_len, num_hiddens)
        P[0, :, ::2] = ang.sin()
        P[0, :, 1::2] = ang.cos()[:, : num_hiddens // 2]
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"T = {T} but max_len = {self.max_len}")
        return self.dropout(X) + self.P[:, :T, :]
