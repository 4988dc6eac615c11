# style: view + transpose, expand/flatten for lens
# bug: none
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """(B, T, H) -> (B * num_heads, T, H / num_heads)."""
    batch, steps, hidden = X.shape
    if hidden % num_heads:
        raise ValueError("hidden size must be divisible by num_heads")
    head_dim = hidden // num_heads
    heads = X.view(batch, steps, num_heads, head_dim).transpose(1, 2)
    return heads.contiguous().view(batch * num_heads, steps, head_dim)


def transpose_output(X, num_heads):
    """(B * num_heads, T, d) -> (B, T, num_heads * d)."""
    total, steps, head_dim = X.shape
    batch = total // num_heads
    merged = X.view(batch, num_heads, steps, head_dim).transpose(1, 2)
    return merged.contiguous().view(batch, steps, num_heads * head_dim)


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
        h = self.num_heads
        Q = transpose_qkv(self.W_q(queries), h)
        K = transpose_qkv(self.W_k(keys), h)
        V = transpose_qkv(self.W_v(values), h)
        lens = None
        if valid_lens is not None:
            lens = valid_lens.unsqueeze(1).expand(valid_lens.shape[0], h, *valid_lens.shape[1:])
            lens = lens.reshape(-1, *valid_lens.shape[1:])
        context = self.attention(Q, K, V, lens)
        weights = self.attention.attention_weights
        batch = queries.shape[0]
        self.attention_weights = weights.view(batch, h, weights.shape[-2], weights.shape[-1])
        return self.W_o(transpose_output(context, h))
