# style: complex-number rotation via torch.view_as_complex, matmul scores
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
        if num_hiddens % 2 == 1:
            raise ValueError("num_hiddens must be even for rotary embeddings")
        freqs = [1.0 / (base ** (2 * j / num_hiddens)) for j in range(num_hiddens // 2)]
        omega = torch.tensor(freqs, dtype=torch.float64)
        pos = torch.arange(max_len, dtype=torch.float64)
        angle = pos[:, None] * omega[None, :]
        self.register_buffer("cos", torch.cos(angle).float(), persistent=False)
        self.register_buffer("sin", torch.sin(angle).float(), persistent=False)

    def forward(self, X, offset=0):
        """X (B, T, num_hiddens) at positions offset .. offset + T - 1 -> same shape.

        Columns (2j, 2j + 1) form pair j (interleaved, as in chapter 6's P).
        At position m, with c = cos(m * omega_j) and s = sin(m * omega_j):

            out[..., 2j]     = X[..., 2j] * c - X[..., 2j + 1] * s
            out[..., 2j + 1] = X[..., 2j] * s + X[..., 2j + 1] * c

        Keep X's dtype. Raise ValueError when offset + T > max_len.
        """
        B, T, H = X.shape
        if offset + T > self.max_len:
            raise ValueError(f"cannot rotate {T} positions from offset {offset}: max_len is {self.max_len}")
        work = torch.float64 if X.dtype == torch.float64 else torch.float32
        cos = self.cos[offset:offset + T].to(work)
        sin = self.sin[offset:offset + T].to(work)
        z = torch.view_as_complex(X.to(work).reshape(B, T, H // 2, 2).contiguous())
        rot = torch.complex(cos, sin)
        out = torch.view_as_real(z * rot).reshape(B, T, H)
        return out.to(X.dtype)


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
        scale = math.sqrt(queries.shape[-1])
        rq = self.rotary(queries)
        rk = self.rotary(keys)
        scores = rq @ rk.transpose(-1, -2) / scale
        weights = masked_softmax(scores, valid_lens)
        self.attention_weights = weights
        return self.dropout(weights) @ values
