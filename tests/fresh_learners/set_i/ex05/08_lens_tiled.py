# style: chunk/stack helpers, list-based length repetition
# bug: MultiHeadAttention.forward | repeats valid_lens by tiling the whole batch (torch.cat([valid_lens] * num_heads)), giving order b0, b1, ..., b0, b1, ... instead of each example's entry num_heads times in a row, so heads get another example's lengths
# expect: MultiHeadAttention.forward | repeat each example's entry
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (B, T, H) -> (B * num_heads, T, H / num_heads)."""
    if X.size(-1) % num_heads:
        raise ValueError("H must be a multiple of num_heads")
    return torch.stack(X.chunk(num_heads, dim=-1), dim=1).flatten(0, 1)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d)."""
    grouped = X.unflatten(0, (-1, num_heads))          # (B, heads, T, d)
    return torch.cat(grouped.unbind(dim=1), dim=-1)


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
        q = transpose_qkv(self.W_q(queries), self.num_heads)
        k = transpose_qkv(self.W_k(keys), self.num_heads)
        v = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = torch.cat([valid_lens] * self.num_heads, dim=0)
        out = self.attention(q, k, v, valid_lens)
        self.attention_weights = self.attention.attention_weights.unflatten(0, (-1, self.num_heads))
        return self.W_o(transpose_output(out, self.num_heads))
