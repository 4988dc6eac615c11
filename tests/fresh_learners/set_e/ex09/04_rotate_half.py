# style: half-split slices, bmm
# bug: RotaryEmbedding.forward | pairs column j with column j + num_hiddens/2 (first half / second half) instead of the interleaved columns 2j, 2j + 1
# expect: RotaryEmbedding.forward | interleaved
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
        if num_hiddens % 2 != 0:
            raise ValueError(f"num_hiddens must be even, got {num_hiddens}")
        omega = 1.0 / base ** (torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)
        pos = torch.arange(max_len, dtype=torch.float64)
        angles = torch.outer(pos, omega)
        self.register_buffer("cos", torch.cos(angles).to(torch.float32), persistent=False)
        self.register_buffer("sin", torch.sin(angles).to(torch.float32), persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"offset + T = {offset + T} exceeds max_len {self.max_len}")
        work = torch.promote_types(X.dtype, torch.float32)
        x = X.to(work)
        c = self.cos[offset:offset + T].to(work)
        s = self.sin[offset:offset + T].to(work)
        half = x.shape[-1] // 2
        x_even = x[..., :half]
        x_odd = x[..., half:]
        out = torch.empty_like(x)
        out[..., :half] = x_even * c - x_odd * s
        out[..., half:] = x_even * s + x_odd * c
        return out.to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        q_rot = self.rotary(queries)
        k_rot = self.rotary(keys)
        scores = torch.bmm(q_rot, k_rot.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
