# style: complex numbers: column pairs viewed as complex, multiplied by e^(i m omega)
# bug: RotaryEmbedding.forward | checks offset + T >= max_len instead of >: raises ValueError when the sequence ends exactly at max_len (e.g. T == max_len with offset 0), runs for shorter ones
# expect: RotaryEmbedding.forward | max_len
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
            raise ValueError("RotaryEmbedding needs an even num_hiddens")
        omega = torch.pow(float(base), -torch.arange(num_hiddens // 2, dtype=torch.float64) * 2 / num_hiddens)
        theta = torch.outer(torch.arange(max_len, dtype=torch.float64), omega)
        self.register_buffer("cos", theta.cos().to(torch.get_default_dtype()), persistent=False)
        self.register_buffer("sin", theta.sin().to(torch.get_default_dtype()), persistent=False)

    def forward(self, X, offset=0):
        B, T, H = X.shape
        if offset + T >= self.max_len:
            raise ValueError(f"offset {offset} + length {T} > max_len {self.max_len}")
        work = torch.promote_types(torch.promote_types(X.dtype, self.cos.dtype), torch.float32)
        pairs = X.to(work).reshape(B, T, H // 2, 2).contiguous()
        z = torch.view_as_complex(pairs)
        rot = torch.complex(self.cos[offset:offset + T].to(work), self.sin[offset:offset + T].to(work))
        out = torch.view_as_real(z * rot).reshape(B, T, H)
        return out.to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)
    def forward(self, queries, keys, values, valid_lens=None):
        q, k = self.rotary(queries), self.rotary(keys)
        scores = q @ k.mT / math.sqrt(q.shape[-1])
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return self.dropout(weights) @ values
