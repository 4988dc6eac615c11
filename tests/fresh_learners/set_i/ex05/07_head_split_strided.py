# style: view-based, splits the feature axis as (d, num_heads)
# bug: transpose_qkv | reshapes the features to (B, T, d, num_heads) and moves the last axis forward, so head h gets the strided columns h, h + num_heads, ... instead of the contiguous slice h*d:(h+1)*d
# expect: transpose_qkv | contiguous slice h*d:(h+1)*d
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (B, T, H) -> (B * num_heads, T, H / num_heads)."""
    B, T, H = X.shape
    if H % num_heads != 0:
        raise ValueError(f"H={H} is not divisible by num_heads={num_heads}")
    d = H // num_heads
    X = X.reshape(B, T, d, num_heads).permute(0, 3, 1, 2)    # (B, heads, T, d)
    return X.reshape(B * num_heads, T, d)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d)."""
    BH, T, d = X.shape
    X = X.reshape(BH // num_heads, num_heads, T, d).permute(0, 2, 1, 3)   # (B, T, heads, d)
    return X.reshape(BH // num_heads, T, num_heads * d)


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
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, num_hiddens)."""
        B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
        Q = transpose_qkv(self.W_q(queries), self.num_heads)
        K = transpose_qkv(self.W_k(keys), self.num_heads)
        V = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)
        heads = self.attention(Q, K, V, valid_lens)
        self.attention_weights = self.attention.attention_weights.reshape(B, self.num_heads, n_q, n_k)
        return self.W_o(transpose_output(heads, self.num_heads))
