# style: complex multiplication with view_as_complex, upcast before and cast back after
# bug: none
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
        if num_hiddens % 2:
            raise ValueError("RoPE needs an even num_hiddens")
        j = torch.arange(num_hiddens // 2, dtype=torch.float32)
        omega = torch.pow(float(base), -2.0 * j / num_hiddens)
        theta = torch.arange(max_len, dtype=torch.float32)[:, None] * omega[None, :]
        self.register_buffer("cos", theta.cos(), persistent=False)
        self.register_buffer("sin", theta.sin(), persistent=False)

    def forward(self, X, offset=0):
        B, T, D = X.shape
        if offset + T > self.max_len:
            raise ValueError(f"positions up to {offset + T} requested, max_len is {self.max_len}")
        real = torch.float64 if X.dtype == torch.float64 else torch.float32
        pairs = X.to(real).reshape(B, T, D // 2, 2).contiguous()
        z = torch.view_as_complex(pairs)
        rot = torch.complex(self.cos[offset:offset + T].to(real), self.sin[offset:offset + T].to(real))
        out = torch.view_as_real(z * rot).reshape(B, T, D)
        return out.to(X.dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        q_rot = self.rotary(queries, offset=0)
        k_rot = self.rotary(keys, offset=0)
        scores = q_rot @ k_rot.transpose(-1, -2) / math.sqrt(queries.shape[-1])
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return self.dropout(weights) @ values
