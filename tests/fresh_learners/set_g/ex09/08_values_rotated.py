# style: repeat_interleave tables
# bug: RotaryDotProductAttention.forward | also rotates the values before pooling (wrong values when the value size equals num_hiddens; raises when it does not)
# expect: RotaryDotProductAttention.forward | values not rotated
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
            raise ValueError("RoPE needs an even num_hiddens")
        exponents = torch.arange(0, num_hiddens, 2, dtype=torch.float32) / num_hiddens
        omega = torch.pow(torch.tensor(float(base)), -exponents)
        positions = torch.arange(max_len, dtype=torch.float32)
        angles = torch.outer(positions, omega)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"positions up to {offset + T} but max_len is {self.max_len}")
        dt = torch.promote_types(X.dtype, torch.float32)
        x = X.to(dt)
        cos = self.cos[offset:offset + T].to(dt).repeat_interleave(2, dim=-1)  # (T, D)
        sin = self.sin[offset:offset + T].to(dt).repeat_interleave(2, dim=-1)
        # partner of (a, b) is (-b, a)
        partner = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
        return (x * cos + partner * sin).to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        B, n_q, d = queries.shape
        rq, rk = self.rotary(queries), self.rotary(keys)
        scores = rq @ rk.transpose(-1, -2) / math.sqrt(d)
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return self.dropout(weights) @ self.rotary(values)
