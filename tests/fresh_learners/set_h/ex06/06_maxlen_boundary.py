# style: vectorised, helper to build angles, guard clause in forward
# bug: PositionalEncoding.forward | the length check uses >= so a sequence of exactly max_len positions is rejected.
# expect: PositionalEncoding.forward | T equal to max_len
"""Exercise 6: sinusoidal positional encoding."""

import torch
from torch import nn


def _angles(max_len, num_hiddens, base):
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    expo = torch.arange(0, num_hiddens, 2, dtype=torch.float32)[None, :] / num_hiddens
    return pos / (base ** expo)


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        ang = _angles(max_len, num_hiddens, base)
        P = torch.empty(1, max_len, num_hiddens)
        P[0, :, 0::2] = ang.sin()
        P[0, :, 1::2] = ang[:, : num_hiddens // 2].cos()
        self.register_buffer("P", P, persistent=False)

    def forward(self, X):
        T = X.size(1)
        if T >= self.max_len:
            raise ValueError(f"got {T} positions, but max_len is {self.max_len}")
        return self.dropout(X + self.P[:, :T])
