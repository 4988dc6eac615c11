# style: slice heads in a list, torch.stack / cat, unflatten
# bug: none
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention

def transpose_qkv(X, num_heads):
    H = X.shape[-1]
    if H % num_heads:
        raise ValueError("H must be divisible by num_heads")
    d = H // num_heads
    heads = [X[:, :, h * d:(h + 1) * d] for h in range(num_heads)]
    stacked = torch.stack(heads, dim=1)  # (B, heads, T, d)
    return stacked.flatten(0, 1)


def transpose_output(X, num_heads):
    B = X.shape[0] // num_heads
    grouped = X.unflatten(0, (B, num_heads))  # (B, heads, T, d)
    return torch.cat([grouped[:, h] for h in range(num_heads)], dim=-1)


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
        nh = self.num_heads
        q = transpose_qkv(self.W_q(queries), nh)
        k = transpose_qkv(self.W_k(keys), nh)
        v = transpose_qkv(self.W_v(values), nh)
        if valid_lens is not None:
            valid_lens = torch.stack([valid_lens] * nh, dim=1).flatten(0, 1)
        out = self.attention(q, k, v, valid_lens)
        w = self.attention.attention_weights
        self.attention_weights = w.unflatten(0, (queries.shape[0], nh))
        return self.W_o(transpose_output(out, nh))
