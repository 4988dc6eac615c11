"""Exercise 6: sinusoidal positional encoding (chapter 6).

Self-attention ignores order, so each position i gets a fixed vector added to
its embedding: column pair (2j, 2j+1) holds sin and cos of i / 10000**(2j / d),
one frequency per pair, from fast (j = 0) to very slow. The base 10000 is a
parameter (a class gives each learner their own value, grader/variants.py).
"""

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """Add the sinusoidal table P to a batch of embeddings, then dropout."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.max_len = max_len
        positions = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
        even_dims = torch.arange(0, num_hiddens, 2, dtype=torch.float64)  # (ceil(d/2),) = 2j
        angles = positions / torch.pow(float(base), even_dims / num_hiddens)  # (max_len, ceil(d/2))
        P = torch.zeros(1, max_len, num_hiddens, dtype=torch.float64)
        P[0, :, 0::2] = torch.sin(angles)
        P[0, :, 1::2] = torch.cos(angles[:, : num_hiddens // 2])  # odd d: last column is a sine
        self.register_buffer("P", P.float(), persistent=False)  # (1, max_len, d)

    def forward(self, X):
        """X (B, T, d) -> dropout(X + P[:, :T]) of the same shape."""
        T = X.shape[1]
        if T > self.max_len:
            raise ValueError(
                f"sequence length {T} exceeds max_len {self.max_len}; "
                "build PositionalEncoding with a larger max_len"
            )
        return self.dropout(X + self.P[:, :T].to(X.dtype))  # (B, T, d)
