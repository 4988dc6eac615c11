# style: explicit per-head slices with torch.split / stack and cat
# bug: none
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    B, T, H = X.shape
    if H % num_heads != 0:
        raise ValueError("H not divisible by num_heads")
    d = H // num_heads
    heads = torch.split(X, d, dim=-1)             # num_heads tensors of (B, T, d)
    stacked = torch.stack(heads, dim=1)           # (B, num_heads, T, d)
    return stacked.reshape(B * num_heads, T, d)


def transpose_output(X, num_heads):
    BH, T, d = X.shape
    B = BH // num_heads
    per_example = X.reshape(B, num_heads, T, d)
    return torch.cat([per_example[:, h] for h in range(num_heads)], dim=-1)


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
        B, n_q, _ = queries.shape
        n_k = keys.shape[1]
        Q = transpose_qkv(self.W_q(queries), self.num_heads)
        K = transpose_qkv(self.W_k(keys), self.num_heads)
        V = transpose_qkv(self.W_v(values), self.num_heads)
        lens = None
        if valid_lens is not None:
            lens = torch.stack([valid_lens[b] for b in range(B) for _ in range(self.num_heads)])
        heads = self.attention(Q, K, V, lens)
        self.attention_weights = self.attention.attention_weights.reshape(B, self.num_heads, n_q, n_k)
        return self.W_o(transpose_output(heads, self.num_heads))
