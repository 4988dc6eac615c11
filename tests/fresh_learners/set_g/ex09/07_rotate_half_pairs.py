# style: first half / second half pairs
# bug: RotaryEmbedding.forward | pairs column j with column j + D/2 (rotate-half layout) instead of the interleaved pair (2j, 2j + 1)
# expect: RotaryEmbedding.forward | interleaved pairs
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
        j = torch.arange(num_hiddens // 2, dtype=torch.float64)
        omega = 1.0 / (base ** (2 * j / num_hiddens))
        m = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        angles = m * omega  # (max_len, num_hiddens // 2)
        self.register_buffer("cos", torch.cos(angles).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angles).float(), persistent=False)

    def forward(self, X, offset=0):
        B, T, D = X.shape
        if offset + T > self.max_len:
            raise ValueError(f"offset + T = {offset + T} exceeds max_len = {self.max_len}")
        work = torch.float64 if X.dtype == torch.float64 else torch.float32
        x = X.to(work)
        c = self.cos[offset:offset + T].to(work)  # (T, D/2)
        s = self.sin[offset:offset + T].to(work)
        x_even, x_odd = x[..., : D // 2], x[..., D // 2:]
        out = torch.cat((x_even * c - x_odd * s, x_even * s + x_odd * c), dim=-1)
        return out.to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q = self.rotary(queries)
        k = self.rotary(keys)
        d = queries.shape[-1]
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
