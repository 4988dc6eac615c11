# style: d2l-like vectorised with a named frequency tensor
# bug: PositionalEncoding.__init__ | assigns cos(X) of all ceil(h/2) angle columns to P[:, :, 1::2], which has only floor(h/2) columns: RuntimeError (shape mismatch) when num_hiddens is odd
# expect: PositionalEncoding.__init__ | odd num_hiddens
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
        freqs = torch.pow(base, torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens)
        pos = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        angle = pos / freqs
        P = torch.zeros(1, max_len, num_hiddens)
        P[:, :, 0::2] = torch.sin(angle)
        P[:, :, 1::2] = torch.cos(angle)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(f"T ({T}) > max_len ({self.max_len})")
        return self.dropout(X + self.P[:, :T, :])
