# style: correct split, merge written as a reshape
# bug: transpose_output | merges with a plain reshape to (B, T, num_heads * d) instead of moving the head axis back, so it is not the inverse of transpose_qkv
# expect: transpose_output | inverse of transpose_qkv
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    B, T, H = X.shape
    if H % num_heads:
        raise ValueError(f"{H} is not divisible by {num_heads}")
    d = H // num_heads
    return X.reshape(B, T, num_heads, d).transpose(1, 2).reshape(B * num_heads, T, d)


def transpose_output(X, num_heads):
    BH, T, d = X.shape
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
        B, n_q, n_k = queries.shape[0], queries.shape[1], keys.shape[1]
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        self.attention_weights = self.attention.attention_weights.reshape(B, self.num_heads, n_q, n_k)
        return self.W_o(transpose_output(output, self.num_heads))
