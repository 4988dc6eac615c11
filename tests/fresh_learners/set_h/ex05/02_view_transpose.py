# style: view + transpose(1, 2), expand-based length repeat
# bug: none
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    B, T, H = X.shape
    if H % num_heads:
        raise ValueError("H must be divisible by num_heads")
    d = H // num_heads
    return X.view(B, T, num_heads, d).transpose(1, 2).contiguous().view(B * num_heads, T, d)


def transpose_output(X, num_heads):
    _, T, d = X.shape
    return X.view(-1, num_heads, T, d).transpose(1, 2).contiguous().view(-1, T, num_heads * d)


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
        B, n_q = queries.shape[:2]
        n_k = keys.shape[1]
        q = transpose_qkv(self.W_q(queries), h)
        k = transpose_qkv(self.W_k(keys), h)
        v = transpose_qkv(self.W_v(values), h)
        if valid_lens is not None:
            # (B,) -> (B, h) -> (B*h,)   or   (B, n_q) -> (B, h, n_q) -> (B*h, n_q)
            valid_lens = valid_lens.unsqueeze(1).expand(B, h, *valid_lens.shape[1:])
            valid_lens = valid_lens.reshape(B * h, *valid_lens.shape[2:])
        out = self.attention(q, k, v, valid_lens)
        self.attention_weights = self.attention.attention_weights.view(B, h, n_q, n_k)
        return self.W_o(transpose_output(out, h))
