# style: torch.outer, stack and interleave
# bug: PositionalEncoding.forward | checks T >= max_len, so it raises ValueError for T == max_len, which is allowed
# expect: PositionalEncoding.forward | T == max_len
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
        half = (num_hiddens + 1) // 2
        j = torch.arange(half, dtype=torch.float64)
        omega = 1.0 / (float(base) ** (2 * j / num_hiddens))
        angles = torch.outer(torch.arange(max_len, dtype=torch.float64), omega)
        table = torch.stack((torch.sin(angles), torch.cos(angles)), dim=-1).reshape(max_len, 2 * half)
        P = table[:, :num_hiddens].to(torch.float32).unsqueeze(0)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        B, T, _ = X.shape
        if T >= self.max_len:
            raise ValueError("got %d positions but max_len is %d" % (T, self.max_len))
        return self.dropout(X + self.P.narrow(1, 0, T))
