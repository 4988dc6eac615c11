# style: view/transpose, self-attention-minded shape bookkeeping
# bug: MultiHeadAttention.forward | stores the weights with view(B, num_heads, n_q, n_q) (the query length twice) instead of (B, num_heads, n_q, n_k): crashes whenever n_q != n_k
# expect: MultiHeadAttention.forward | attention_weights (B, num_heads, n_q, n_k)
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """(B, T, H) -> (B * num_heads, T, H / num_heads)."""
    B, T, H = X.shape
    if H % num_heads:
        raise ValueError(f"cannot split {H} features into {num_heads} heads")
    return X.view(B, T, num_heads, H // num_heads).transpose(1, 2).reshape(B * num_heads, T, H // num_heads)


def transpose_output(X, num_heads):
    """(B * num_heads, T, d) -> (B, T, num_heads * d)."""
    BH, T, d = X.shape
    return X.view(BH // num_heads, num_heads, T, d).transpose(1, 2).reshape(BH // num_heads, T, num_heads * d)


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
        B, T, _ = queries.shape
        q = transpose_qkv(self.W_q(queries), self.num_heads)
        k = transpose_qkv(self.W_k(keys), self.num_heads)
        v = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = valid_lens.repeat_interleave(self.num_heads, dim=0)
        out = self.attention(q, k, v, valid_lens)
        self.attention_weights = self.attention.attention_weights.view(B, self.num_heads, T, T)
        return self.W_o(transpose_output(out, self.num_heads))
