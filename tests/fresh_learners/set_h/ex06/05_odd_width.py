# style: d2l textbook copy, strided slice assignment
# bug: PositionalEncoding.__init__ | the cosine slice assignment assumes an even num_hiddens and crashes for odd widths.
# expect: PositionalEncoding | odd num_hiddens
"""Exercise 6: sinusoidal positional encoding."""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        P = torch.zeros((1, max_len, num_hiddens))
        X = torch.arange(max_len, dtype=torch.float32).reshape(-1, 1) / torch.pow(
            base, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens
        )
        P[:, :, 0::2] = torch.sin(X)
        P[:, :, 1::2] = torch.cos(X)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        if X.shape[1] > self.max_len:
            raise ValueError(f"sequence length {X.shape[1]} > max_len {self.max_len}")
        X = X + self.P[:, : X.shape[1], :].to(X.device)
        return self.dropout(X)
