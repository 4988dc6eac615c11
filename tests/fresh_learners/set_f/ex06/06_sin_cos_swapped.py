# style: exp(-log(base)) frequencies, outer product, stack(cos, sin) interleaved then trimmed
# bug: PositionalEncoding.__init__ | stacks (cos, sin) instead of (sin, cos): even columns get the cosine and odd columns the sine
# expect: PositionalEncoding.__init__ | sin
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
        import math

        half = (num_hiddens + 1) // 2
        freqs = torch.exp(-math.log(base) * torch.arange(half, dtype=torch.float64) * 2 / num_hiddens)
        angles = torch.outer(torch.arange(max_len, dtype=torch.float64), freqs)  # (max_len, half)
        table = torch.stack((angles.cos(), angles.sin()), dim=-1).reshape(max_len, 2 * half)
        P = table[:, :num_hiddens].to(torch.float32).unsqueeze(0)
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        n = X.shape[-2]
        if n > self.max_len:
            raise ValueError(f"got {n} positions but max_len is {self.max_len}")
        return self.dropout(X + self.P[:, :n].to(device=X.device, dtype=X.dtype))
