# style: view/transpose/contiguous, flatten and unflatten, named sizes
# bug: none
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (B, T, H) -> (B * num_heads, T, H / num_heads).

    Row b * num_heads + h holds head h of example b.
    """
    batch, steps, width = X.shape
    if width % num_heads:
        raise ValueError("the hidden size must be divisible by num_heads")
    head_dim = width // num_heads
    X = X.view(batch, steps, num_heads, head_dim).transpose(1, 2).contiguous()
    return X.view(batch * num_heads, steps, head_dim)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d)."""
    rows, steps, head_dim = X.shape
    X = X.view(rows // num_heads, num_heads, steps, head_dim).transpose(1, 2).contiguous()
    return X.view(rows // num_heads, steps, num_heads * head_dim)


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
        h = self.num_heads
        q = transpose_qkv(self.W_q(queries), h)
        k = transpose_qkv(self.W_k(keys), h)
        v = transpose_qkv(self.W_v(values), h)
        lens = None
        if valid_lens is not None:
            # (B,) -> (B*h,), (B, n_q) -> (B*h, n_q); each example's entry h times in a row
            lens = valid_lens.unsqueeze(1).expand(-1, h, *valid_lens.shape[1:])
            lens = lens.reshape(-1, *valid_lens.shape[1:])
        heads_out = self.attention(q, k, v, lens)
        weights = self.attention.attention_weights
        self.attention_weights = weights.unflatten(0, (queries.shape[0], h))
        return self.W_o(transpose_output(heads_out, h))
