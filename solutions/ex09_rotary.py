"""Exercise 9: rotary position embedding (chapter 10).

Instead of adding a position vector (chapter 6), RoPE rotates each column pair
(2j, 2j + 1) of a query or key at position m by the angle m * omega_j, with the
frequencies omega_j = 1 / 10000**(2j / d) of the sinusoidal table. Rotations
compose, R(m)^T R(n) = R(n - m), so the score of a query at m and a key at n
depends on the offset n - m only, never on m and n themselves.
"""

import math

import torch
from torch import nn

from .ex01_softmax import masked_softmax


class RotaryEmbedding(nn.Module):
    """Rotate column pair j of the vector at position m by the angle m * omega_j."""

    def __init__(self, num_hiddens, max_len=1000, base=10000):
        """Build the cosines and sines once and keep them as buffers.

        omega_j = 1 / base**(2j / num_hiddens) for j = 0 .. num_hiddens/2 - 1
        (the frequencies of chapter 6's table P; base is 10000 in the
        published exercise, and in a class your exercise variant gives you
        your own: the Practice page and `python -m grader --variant N` show
        it, write it as the default here and in RotaryDotProductAttention,
        which passes it on), and for every position
        m < max_len:

            self.cos[m, j] = cos(m * omega_j),  self.sin[m, j] = sin(m * omega_j)

        both of shape (max_len, num_hiddens // 2), registered with
        self.register_buffer(name, tensor, persistent=False).
        The tables may have any floating-point dtype (float32, torch's
        default, or float64): the checks compare them after module.to(float32)
        at float32 precision, and after module.to(torch.float64) they must be
        float64, which registered buffers are.
        Raise ValueError when num_hiddens is odd.
        """
        super().__init__()
        if num_hiddens % 2:
            raise ValueError(f"num_hiddens must be even (the columns are rotated in pairs); got {num_hiddens}")
        self.max_len = max_len
        positions = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        omega = 1.0 / torch.pow(float(base), torch.arange(0, num_hiddens, 2, dtype=torch.float64) / num_hiddens)
        angles = positions * omega[None, :]  # (max_len, d / 2)
        self.register_buffer("cos", torch.cos(angles).float(), persistent=False)  # (max_len, d / 2)
        self.register_buffer("sin", torch.sin(angles).float(), persistent=False)  # (max_len, d / 2)

    def forward(self, X, offset=0):
        """X (B, T, d) at positions offset .. offset + T - 1 -> rotated X, same shape."""
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"positions up to {offset + T - 1} exceed max_len {self.max_len}; "
                             "build RotaryEmbedding with a larger max_len")
        cos = self.cos[offset : offset + T].to(X.dtype)  # (T, d / 2)
        sin = self.sin[offset : offset + T].to(X.dtype)  # (T, d / 2)
        x_even, x_odd = X[..., 0::2], X[..., 1::2]  # (B, T, d / 2) each
        rotated = torch.stack((x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1)  # (B, T, d / 2, 2)
        return rotated.flatten(-2)  # (B, T, d): pairs back in columns (2j, 2j + 1)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v)."""
        d = queries.shape[-1]
        rotated_q = self.rotary(queries)  # (B, n_q, d): query i at position i
        rotated_k = self.rotary(keys)  # (B, n_k, d): key j at position j
        scores = torch.bmm(rotated_q, rotated_k.transpose(1, 2)) / math.sqrt(d)  # (B, n_q, n_k)
        self.attention_weights = masked_softmax(scores, valid_lens)  # (B, n_q, n_k)
        return torch.bmm(self.dropout(self.attention_weights), values)  # (B, n_q, v)
