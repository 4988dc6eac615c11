# style: d2l-like, positions built with torch.linspace, separate sin/cos tensors
# bug: PositionalEncoding.__init__ | positions run 1 .. max_len instead of 0 .. max_len - 1 (row i holds position i + 1)
# expect: PositionalEncoding.__init__ | positions start at 0
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
        positions = torch.linspace(1, max_len, max_len).reshape(max_len, 1)
        scales = base ** (torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        args = positions / scales
        sin_part = torch.sin(args)
        cos_part = torch.cos(args)
        P = torch.zeros((1, max_len, num_hiddens))
        P[:, :, 0::2] = sin_part
        P[:, :, 1::2] = cos_part[:, : num_hiddens // 2]
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"T={T} is larger than max_len={self.max_len}")
        return self.dropout(X + self.P[:, :T, :])
