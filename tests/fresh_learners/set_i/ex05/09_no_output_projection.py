# style: einsum-flavoured, heads handled with reshape/transpose inline helpers
# bug: MultiHeadAttention.forward | returns the merged heads transpose_output(...) without the final W_o projection
# expect: MultiHeadAttention.forward | W_o output projection
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (B, T, H) -> (B * num_heads, T, H / num_heads).

    Row b * num_heads + h must hold head h of example b, and head h is the
    slice X[b, :, h * d:(h + 1) * d] with d = H / num_heads.
    """
    B, T, H = X.shape
    if H % num_heads != 0:
        raise ValueError(f"{H} is not divisible by {num_heads}")
    d = H // num_heads
    return X.reshape(B, T, num_heads, d).transpose(1, 2).reshape(B * num_heads, T, d)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d).

    The exact inverse of transpose_qkv.
    """
    BH, T, d = X.shape
    B = BH // num_heads
    return X.reshape(B, num_heads, T, d).transpose(1, 2).reshape(B, T, num_heads * d)


class MultiHeadAttention(nn.Module):
    """num_heads scaled dot-product attentions in parallel subspaces."""

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

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, num_hiddens).

        1. project with W_q, W_k, W_v and split into heads with transpose_qkv
        2. valid_lens, (B,) or (B, n_q), must apply to every head of its
           example: repeat each example's entry num_heads times in a row
        3. self.attention on all heads at once
        4. store self.attention_weights with shape (B, num_heads, n_q, n_k)
        5. merge the heads with transpose_output and mix them with W_o
        """
        B = queries.shape[0]
        Q = transpose_qkv(self.W_q(queries), self.num_heads)
        K = transpose_qkv(self.W_k(keys), self.num_heads)
        V = transpose_qkv(self.W_v(values), self.num_heads)
        lens = None if valid_lens is None else valid_lens.repeat_interleave(self.num_heads, dim=0)
        context = self.attention(Q, K, V, lens)
        weights = self.attention.attention_weights
        self.attention_weights = weights.reshape(B, self.num_heads, *weights.shape[-2:])
        return transpose_output(context, self.num_heads)
