# style: vectorised with torch.arange over pair index j, sin/cos written into views
# bug: PositionalEncoding.__init__ | the exponent is j / num_hiddens instead of 2j / num_hiddens (pair index not doubled), so the frequencies of all pairs but the first are wrong
# expect: PositionalEncoding.__init__ | 2j / num_hiddens
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
        n_pairs = (num_hiddens + 1) // 2
        j = torch.arange(n_pairs, dtype=torch.float32)
        omega = 1.0 / (base ** (j / num_hiddens))
        theta = torch.arange(max_len, dtype=torch.float32)[:, None] * omega[None, :]
        P = torch.empty(1, max_len, num_hiddens)
        sines = P[0, :, 0::2]
        cosines = P[0, :, 1::2]
        sines.copy_(torch.sin(theta))
        cosines.copy_(torch.cos(theta[:, : cosines.shape[1]]))
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        steps = X.shape[1]
        if steps > self.max_len:
            raise ValueError(f"{steps} positions requested, only max_len={self.max_len} available")
        return self.dropout(X + self.P[:, :steps, :])
