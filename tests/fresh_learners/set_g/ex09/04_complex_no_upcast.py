# style: complex numbers on the input dtype directly
# bug: RotaryEmbedding.forward | calls view_as_complex on X in its own dtype (no float32 upcast): RuntimeError for bfloat16 X; float32/float64 work
# expect: RotaryEmbedding.forward | bfloat16
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
        if num_hiddens % 2 == 1:
            raise ValueError("odd num_hiddens")
        half = num_hiddens // 2
        omega = [1.0 / base ** (2 * j / num_hiddens) for j in range(half)]
        cos = torch.tensor([[math.cos(m * w) for w in omega] for m in range(max_len)])
        sin = torch.tensor([[math.sin(m * w) for w in omega] for m in range(max_len)])
        self.register_buffer("cos", cos.reshape(max_len, half), persistent=False)
        self.register_buffer("sin", sin.reshape(max_len, half), persistent=False)

    def forward(self, X, offset=0):
        B, T, D = X.shape
        if offset + T > self.max_len:
            raise ValueError(f"offset {offset} + length {T} > max_len {self.max_len}")
        z = torch.view_as_complex(X.reshape(B, T, D // 2, 2).contiguous())
        rot = torch.complex(self.cos[offset:offset + T], self.sin[offset:offset + T])
        out = torch.view_as_real(z * rot).reshape(B, T, D)
        return out.to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        rq = self.rotary(queries, offset=0)
        rk = self.rotary(keys, offset=0)
        scores = torch.einsum("bqd,bkd->bqk", rq, rk) / math.sqrt(queries.size(-1))
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
