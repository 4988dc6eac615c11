# style: vectorised even/odd slices, input upcast to float32 at the start
# bug: RotaryEmbedding.forward | upcasts float16/bfloat16 input to float32 but never casts the result back, so half-precision inputs come back as float32 instead of keeping X's dtype
# expect: RotaryEmbedding.forward | keep X's dtype
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
            raise ValueError(f"num_hiddens must be even for rotary embeddings, got {num_hiddens}")
        omega = 1.0 / base ** (torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)
        angles = torch.arange(max_len, dtype=torch.float64)[:, None] * omega[None, :]
        self.register_buffer("cos", torch.cos(angles).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angles).float(), persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"positions up to {offset + T} requested but max_len is {self.max_len}")
        if X.dtype in (torch.float16, torch.bfloat16):
            X = X.float()
        c = self.cos[offset:offset + T].to(X.dtype)
        s = self.sin[offset:offset + T].to(X.dtype)
        x_even, x_odd = X[..., 0::2], X[..., 1::2]
        out_even = x_even * c - x_odd * s
        out_odd = x_even * s + x_odd * c
        return torch.stack((out_even, out_odd), dim=-1).flatten(-2)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        q = self.rotary(queries)
        k = self.rotary(keys)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
