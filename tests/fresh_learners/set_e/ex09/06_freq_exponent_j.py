# style: pairs reshape/stack, frequency exponent
# bug: RotaryEmbedding.__init__ | frequency exponent is j / num_hiddens instead of 2j / num_hiddens
# expect: RotaryEmbedding.__init__ | 2j
"""Exercise 9: rotary position embedding (chapter 10, "Variants", the
relative-positions experiment).

RoPE rotates the queries and keys themselves, pair of columns by pair of
columns, by an angle proportional to their position.
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
            raise ValueError("RotaryEmbedding needs an even num_hiddens")
        half = num_hiddens // 2
        j = torch.arange(half, dtype=torch.float32)
        inv_freq = torch.pow(float(base), -j / num_hiddens)
        m = torch.arange(max_len, dtype=torch.float32).unsqueeze(1)
        theta = m * inv_freq.unsqueeze(0)
        self.register_buffer("cos", theta.cos(), persistent=False)
        self.register_buffer("sin", theta.sin(), persistent=False)

    def forward(self, X, offset=0):
        batch, steps, hidden = X.shape
        if offset + steps > self.max_len:
            raise ValueError(f"positions up to {offset + steps} but max_len={self.max_len}")
        dtype = X.dtype
        compute = torch.float64 if dtype == torch.float64 else torch.float32
        pairs = X.to(compute).reshape(batch, steps, hidden // 2, 2)
        a, b = pairs[..., 0], pairs[..., 1]
        cos = self.cos[offset:offset + steps].to(compute)
        sin = self.sin[offset:offset + steps].to(compute)
        rotated = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)
        return rotated.reshape(batch, steps, hidden).to(dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        queries = self.rotary(queries, offset=0)
        keys = self.rotary(keys, offset=0)
        scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.size(-1))
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return self.dropout(weights) @ values
