# style: complex arithmetic (view_as_complex / view_as_real), tables from torch.polar
# bug: none
"""Exercise 9: rotary position embedding (chapter 10, "Variants", the
relative-positions experiment).

Instead of adding a position vector to the embeddings (chapter 6), RoPE
rotates the queries and keys themselves, pair of columns by pair of columns,
by an angle proportional to their position. The dot product of a query at
position m with a key at position n then depends only on the offset n - m.
"""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class RotaryEmbedding(nn.Module):
    """Rotate column pair j of the vector at position m by the angle m * omega_j."""

    def __init__(self, num_hiddens, max_len=1000, base=10000):
        super().__init__()
        self.max_len = max_len
        if num_hiddens % 2:
            raise ValueError("RotaryEmbedding needs an even num_hiddens (pairs of columns)")
        half = num_hiddens // 2
        j = torch.arange(half, dtype=torch.float32)
        omega = torch.pow(torch.tensor(float(base)), -2.0 * j / num_hiddens)
        m = torch.arange(max_len, dtype=torch.float32)
        theta = torch.outer(m, omega)
        self.register_buffer("cos", theta.cos(), persistent=False)
        self.register_buffer("sin", theta.sin(), persistent=False)

    def forward(self, X, offset=0):
        B, T, H = X.shape
        if offset + T > self.max_len:
            raise ValueError(f"offset {offset} + length {T} > max_len {self.max_len}")
        # complex needs float32 or float64
        dt = torch.float64 if X.dtype == torch.float64 or self.cos.dtype == torch.float64 else torch.float32
        rot = torch.complex(self.cos[offset:offset + T].to(dt), self.sin[offset:offset + T].to(dt))
        pairs = torch.view_as_complex(X.to(dt).reshape(B, T, H // 2, 2).contiguous())
        rotated = torch.view_as_real(pairs * rot).reshape(B, T, H)
        return rotated.to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q_rot, k_rot = self.rotary(queries), self.rotary(keys)
        scores = q_rot @ k_rot.transpose(-1, -2) / math.sqrt(queries.size(-1))
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return self.dropout(weights) @ values
