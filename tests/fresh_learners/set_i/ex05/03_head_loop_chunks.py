# style: explicit per-head slicing with chunk/stack, einops-free loops
# bug: none
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (B, T, H) -> (B * num_heads, T, H / num_heads).

    Row b * num_heads + h must hold head h of example b, and head h is the
    slice X[b, :, h * d:(h + 1) * d] with d = H / num_heads.
    """
    H = X.shape[-1]
    if H % num_heads != 0:
        raise ValueError(f"H={H} not divisible by num_heads={num_heads}")
    heads = torch.chunk(X, num_heads, dim=-1)       # num_heads tensors (B, T, d)
    stacked = torch.stack(heads, dim=1)             # (B, num_heads, T, d)
    return stacked.flatten(0, 1)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d).

    The exact inverse of transpose_qkv.
    """
    per_example = X.reshape(-1, num_heads, *X.shape[1:])    # (B, num_heads, T, d)
    return torch.cat([per_example[:, i] for i in range(num_heads)], dim=-1)


class MultiHeadAttention(nn.Module):
    """num_heads scaled dot-product attentions in parallel subspaces.

    temperature is handed to DotProductAttention (ex03), which divides every
    score by it; 1.0 in the published exercise.
    """

    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False,
                 temperature=1.0):
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError(
                f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads}): "
                "each head gets num_hiddens / num_heads dimensions"
            )
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout, temperature)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def _repeat_lens(self, valid_lens):
        if valid_lens is None:
            return None
        rows = [valid_lens[b:b + 1] for b in range(valid_lens.shape[0]) for _ in range(self.num_heads)]
        return torch.cat(rows, dim=0)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, num_hiddens).

        1. project with W_q, W_k, W_v and split into heads with transpose_qkv
        2. valid_lens, (B,) or (B, n_q), must apply to every head of its
           example: repeat each example's entry num_heads times in a row
        3. self.attention on all heads at once
        4. store self.attention_weights with shape (B, num_heads, n_q, n_k)
        5. merge the heads with transpose_output and mix them with W_o
        """
        Q = transpose_qkv(self.W_q(queries), self.num_heads)
        K = transpose_qkv(self.W_k(keys), self.num_heads)
        V = transpose_qkv(self.W_v(values), self.num_heads)
        out = self.attention(Q, K, V, self._repeat_lens(valid_lens))
        w = self.attention.attention_weights
        self.attention_weights = w.reshape(queries.shape[0], self.num_heads, w.shape[1], w.shape[2])
        return self.W_o(transpose_output(out, self.num_heads))
