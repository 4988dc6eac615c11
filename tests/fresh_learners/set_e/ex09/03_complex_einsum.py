# style: complex multiplication via view_as_complex, einsum
# bug: none
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
            raise ValueError(f"odd num_hiddens={num_hiddens}: columns must come in pairs")
        exponents = torch.arange(0, num_hiddens, 2).double() / num_hiddens
        omegas = torch.exp(-exponents * math.log(base))
        positions = torch.arange(max_len).double()
        angle = positions[:, None] * omegas[None, :]
        self.register_buffer("cos", torch.cos(angle).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angle).float(), persistent=False)

    def forward(self, X, offset=0):
        T = X.size(1)
        if offset + T > self.max_len:
            raise ValueError(f"need {offset + T} positions, table has max_len={self.max_len}")
        orig = X.dtype
        if orig == torch.float64:
            xc = torch.view_as_complex(X.reshape(*X.shape[:-1], -1, 2).contiguous())
            rot = torch.complex(self.cos[offset:offset + T].double(), self.sin[offset:offset + T].double())
        else:
            xc = torch.view_as_complex(X.float().reshape(*X.shape[:-1], -1, 2).contiguous())
            rot = torch.complex(self.cos[offset:offset + T].float(), self.sin[offset:offset + T].float())
        out = torch.view_as_real(xc * rot).reshape(X.shape)
        return out.to(orig)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        scores = torch.einsum("bqd,bkd->bqk", self.rotary(queries), self.rotary(keys))
        attn = masked_softmax(scores / math.sqrt(d), valid_lens)
        self.attention_weights = attn
        return torch.einsum("bqk,bkv->bqv", self.dropout(attn), values)
