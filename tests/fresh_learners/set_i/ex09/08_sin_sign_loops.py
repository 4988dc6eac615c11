# style: loop over column pairs writing into a new tensor, d2l-like attention
# bug: RotaryEmbedding.forward | the sine terms have the wrong signs (out[2j] = x0*c + x1*s, out[2j+1] = -x0*s + x1*c), i.e. it rotates by -m*omega_j instead of +m*omega_j
# expect: RotaryEmbedding.forward | sign of the sine
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
        if num_hiddens % 2 != 0:
            raise ValueError("num_hiddens must be even")
        self.num_hiddens = num_hiddens
        positions = torch.arange(max_len, dtype=torch.float32)
        cos_cols, sin_cols = [], []
        for j in range(num_hiddens // 2):
            omega_j = 1.0 / (base ** (2 * j / num_hiddens))
            cos_cols.append(torch.cos(positions * omega_j))
            sin_cols.append(torch.sin(positions * omega_j))
        self.register_buffer("cos", torch.stack(cos_cols, dim=1), persistent=False)
        self.register_buffer("sin", torch.stack(sin_cols, dim=1), persistent=False)

    def forward(self, X, offset=0):
        T = X.shape[1]
        if offset + T > self.max_len:
            raise ValueError(f"offset + T = {offset + T} is beyond max_len = {self.max_len}")
        in_dtype = X.dtype
        Xf = X.float() if in_dtype in (torch.float16, torch.bfloat16) else X
        c = self.cos[offset:offset + T].to(Xf.dtype)
        s = self.sin[offset:offset + T].to(Xf.dtype)
        out = torch.empty_like(Xf)
        for j in range(Xf.shape[-1] // 2):
            x0 = Xf[..., 2 * j]
            x1 = Xf[..., 2 * j + 1]
            out[..., 2 * j] = x0 * c[:, j] + x1 * s[:, j]
            out[..., 2 * j + 1] = -x0 * s[:, j] + x1 * c[:, j]
        return out.to(in_dtype)


class RotaryDotProductAttention(nn.Module):
    """Scaled dot-product attention on rotated queries and keys: scores depend on relative offsets."""

    def __init__(self, num_hiddens, dropout, max_len=1000, base=10000):
        super().__init__()
        self.rotary = RotaryEmbedding(num_hiddens, max_len, base)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        queries = self.rotary(queries)
        keys = self.rotary(keys)
        d = queries.shape[-1]
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
        self.attention_weights = masked_softmax(scores, valid_lens)
        return torch.bmm(self.dropout(self.attention_weights), values)
