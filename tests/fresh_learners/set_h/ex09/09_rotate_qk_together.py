# style: pair loop, queries and keys rotated in one batched call
# bug: RotaryDotProductAttention.forward | concatenates queries and keys on the batch axis to rotate them in one call, which crashes when n_q != n_k.
# expect: RotaryDotProductAttention | n_q differs from n_k
"""Exercise 9: rotary position embedding (chapter 10, "Variants")."""

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
            raise ValueError(f"num_hiddens={num_hiddens} is odd")
        half = num_hiddens // 2
        cos = torch.empty(max_len, half)
        sin = torch.empty(max_len, half)
        positions = torch.arange(max_len, dtype=torch.float64)
        for j in range(half):
            omega_j = 1.0 / (base ** (2 * j / num_hiddens))
            cos[:, j] = torch.cos(positions * omega_j)
            sin[:, j] = torch.sin(positions * omega_j)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"offset {offset} + length {T} exceeds max_len {self.max_len}")
        dt = torch.float64 if X.dtype == torch.float64 else torch.float32
        Xf = X.to(dt)
        cols = []
        for j in range(X.shape[-1] // 2):
            c = self.cos[offset:offset + T, j].to(dt)  # (T,)
            s = self.sin[offset:offset + T, j].to(dt)
            a = Xf[..., 2 * j]
            b = Xf[..., 2 * j + 1]
            cols.append(a * c - b * s)
            cols.append(a * s + b * c)
        return torch.stack(cols, dim=-1).to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.size(-1)
        B = queries.shape[0]
        rotated = self.rotary(torch.cat((queries, keys), dim=0))  # one pass for both
        rq, rk = rotated[:B], rotated[B:]
        scores = torch.einsum("bqd,bkd->bqk", rq, rk) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
