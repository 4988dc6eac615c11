# style: full-width cos/sin via repeat_interleave, rotate-pairs helper, einsum attention
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
        if num_hiddens % 2 == 1:
            raise ValueError("odd num_hiddens")
        half = num_hiddens // 2
        omega = torch.tensor([1.0 / base ** (2 * j / num_hiddens) for j in range(half)], dtype=torch.float64)
        m = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        self.register_buffer("cos", torch.cos(m * omega).to(torch.float32), persistent=False)
        self.register_buffer("sin", torch.sin(m * omega).to(torch.float32), persistent=False)

    @staticmethod
    def _rotate_pairs(x):
        # (x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)
        even = x[..., 0::2]
        odd = x[..., 1::2]
        return torch.stack((-odd, even), dim=-1).reshape(x.shape)

    def forward(self, X, offset=0):
        T = X.size(1)
        if T + offset > self.max_len:
            raise ValueError(f"need positions {offset}..{offset + T - 1} but max_len is {self.max_len}")
        dtype = X.dtype
        if dtype in (torch.float16, torch.bfloat16):
            X = X.float()
        cos = self.cos[offset:offset + T].repeat_interleave(2, dim=-1).to(X.dtype)
        sin = self.sin[offset:offset + T].repeat_interleave(2, dim=-1).to(X.dtype)
        return (X * cos + self._rotate_pairs(X) * sin).to(dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)
    def forward(self, queries, keys, values, valid_lens=None):
        rq = self.rotary(queries, offset=0)
        rk = self.rotary(keys, offset=0)
        scores = torch.einsum("bqd,bkd->bqk", rq, rk) / math.sqrt(queries.shape[-1])
        attn = masked_softmax(scores, valid_lens)
        self.attention_weights = attn
        return torch.einsum("bqk,bkv->bqv", self.dropout(attn), values)
