# style: vectorised even/odd strided slices, torch.stack + flatten to re-interleave
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
        if num_hiddens % 2 != 0:
            raise ValueError(f"num_hiddens must be even, got {num_hiddens}")
        j = torch.arange(0, num_hiddens, 2, dtype=torch.float64)
        omega = 1.0 / (base ** (j / num_hiddens))  # (num_hiddens / 2,)
        angles = torch.arange(max_len, dtype=torch.float64)[:, None] * omega[None, :]
        self.register_buffer("cos", torch.cos(angles).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angles).float(), persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"positions up to {offset + T} exceed max_len {self.max_len}")
        work = torch.promote_types(X.dtype, self.cos.dtype)
        c = self.cos[offset:offset + T].to(work)  # (T, num_hiddens / 2)
        s = self.sin[offset:offset + T].to(work)
        x = X.to(work)
        even, odd = x[..., 0::2], x[..., 1::2]
        out = torch.stack((even * c - odd * s, even * s + odd * c), dim=-1).flatten(-2)
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
