"""Exercise 5: multi-head attention (chapter 5).

Project queries, keys and values to num_hiddens, split the last axis into
num_heads heads, run scaled dot-product attention on every head in one batched
call, then merge the heads and mix them with W_o.
"""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """(B, T, H) -> (B * num_heads, T, H / num_heads); row b*num_heads + h is head h of b."""
    B, T, H = X.shape
    if H % num_heads != 0:
        raise ValueError(f"the last axis ({H}) must be divisible by num_heads ({num_heads})")
    X = X.reshape(B, T, num_heads, H // num_heads)  # (B, T, heads, H/heads)
    X = X.permute(0, 2, 1, 3)  # (B, heads, T, H/heads)
    return X.reshape(B * num_heads, T, H // num_heads)  # (B*heads, T, H/heads)


def transpose_output(X, num_heads):
    """Inverse of transpose_qkv: (B * num_heads, T, d) -> (B, T, num_heads * d)."""
    BH, T, d = X.shape
    if BH % num_heads != 0:
        raise ValueError(f"the first axis ({BH}) must be divisible by num_heads ({num_heads})")
    X = X.reshape(BH // num_heads, num_heads, T, d)  # (B, heads, T, d)
    X = X.permute(0, 2, 1, 3)  # (B, T, heads, d)
    return X.reshape(BH // num_heads, T, num_heads * d)  # (B, T, heads*d)


class MultiHeadAttention(nn.Module):
    """num_heads scaled dot-product attentions in parallel subspaces.

    temperature goes to DotProductAttention (every score divided by it): 1.0 in the published exercise; a class
    variant gives each learner their own default (course/common/exercise_variants.py)."""

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
        queries = transpose_qkv(self.W_q(queries), self.num_heads)  # (B*heads, n_q, d)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)  # (B*heads, n_k, d)
        values = transpose_qkv(self.W_v(values), self.num_heads)  # (B*heads, n_k, d)
        if valid_lens is not None:
            # Example b's lengths go to its num_heads consecutive rows.
            valid_lens = torch.repeat_interleave(valid_lens, self.num_heads, dim=0)  # (B*heads,) or (B*heads, n_q)
        output = self.attention(queries, keys, values, valid_lens)  # (B*heads, n_q, d)
        weights = self.attention.attention_weights  # (B*heads, n_q, n_k)
        self.attention_weights = weights.reshape(B, self.num_heads, n_q, n_k)  # (B, heads, n_q, n_k)
        return self.W_o(transpose_output(output, self.num_heads))  # (B, n_q, num_hiddens)
