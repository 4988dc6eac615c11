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
        self.max_len = max_len
        raise NotImplementedError("RotaryEmbedding.__init__ (build cos and sin)")

    def forward(self, X, offset=0):
        """X (B, T, num_hiddens) at positions offset .. offset + T - 1 -> same shape.

        Columns (2j, 2j + 1) form pair j (interleaved, as in chapter 6's P).
        At position m, with c = cos(m * omega_j) and s = sin(m * omega_j):

            out[..., 2j]     = X[..., 2j] * c - X[..., 2j + 1] * s
            out[..., 2j + 1] = X[..., 2j] * s + X[..., 2j + 1] * c

        Keep X's dtype, float16 and bfloat16 too (compute in float32 where
        an operation needs it, then cast back). Raise ValueError when
        offset + T > max_len.
        """
        raise NotImplementedError("RotaryEmbedding.forward")


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, d), keys (B, n_k, d), values (B, n_k, v) -> (B, n_q, v).

        Query i sits at position i and key j at position j (offset 0 for
        both). Rotate both with self.rotary, then as in exercise 3:
        scores = rotated queries @ rotated keys^T / sqrt(d), masked_softmax
        with valid_lens, store self.attention_weights (B, n_q, n_k), return
        dropout(weights) @ values. The values are not rotated.
        """
        raise NotImplementedError("RotaryDotProductAttention.forward")
