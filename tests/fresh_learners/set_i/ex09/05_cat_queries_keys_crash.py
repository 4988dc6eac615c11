# style: rotate-pairs helper, queries and keys rotated in one batched call
# bug: RotaryDotProductAttention.forward | rotates queries and keys together via torch.cat([queries, keys], dim=0), which requires n_q == n_k: RuntimeError whenever the number of queries differs from the number of keys
# expect: RotaryDotProductAttention.forward | n_q != n_k
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


def _rotate_pairs(x):
    """(x0, x1, x2, x3, ...) -> (-x1, x0, -x3, x2, ...)."""
    x = x.unflatten(-1, (-1, 2))
    return torch.stack((-x[..., 1], x[..., 0]), dim=-1).flatten(-2)


class RotaryEmbedding(nn.Module):
    """Rotate column pair j of the vector at position m by the angle m * omega_j."""

    def __init__(self, num_hiddens, max_len=1000, base=10000):
        super().__init__()
        self.max_len = max_len
        if num_hiddens % 2 == 1:
            raise ValueError(f"odd num_hiddens ({num_hiddens}) cannot be split into pairs")
        omega = [1.0 / base ** (2 * j / num_hiddens) for j in range(num_hiddens // 2)]
        omega = torch.tensor(omega, dtype=torch.float64)
        pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(-1)
        self.register_buffer("cos", torch.cos(pos * omega).to(torch.float32), persistent=False)
        self.register_buffer("sin", torch.sin(pos * omega).to(torch.float32), persistent=False)

    def forward(self, X, offset=0):
        n = X.size(1)
        if offset + n > self.max_len:
            raise ValueError(f"need positions {offset}..{offset + n - 1}, but max_len={self.max_len}")
        orig = X.dtype
        if orig in (torch.float16, torch.bfloat16):
            X = X.to(torch.float32)
        cos = self.cos[offset:offset + n].repeat_interleave(2, dim=-1).to(X.dtype)
        sin = self.sin[offset:offset + n].repeat_interleave(2, dim=-1).to(X.dtype)
        return (X * cos + _rotate_pairs(X) * sin).to(orig)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        d = queries.shape[-1]
        # one call rotates both (same positions 0.. for queries and keys)
        both = self.rotary(torch.cat([queries, keys], dim=0))
        q, k = both.split(queries.shape[0], dim=0)
        scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.einsum("bqk,bkv->bqv", self.dropout(self.attention_weights), values)
