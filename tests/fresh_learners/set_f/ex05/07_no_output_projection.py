# style: split into head chunks + torch.stack / torch.cat, lengths via unsqueeze + expand
# bug: MultiHeadAttention.forward | returns the merged heads without the output projection W_o
# expect: MultiHeadAttention.forward | W_o
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    B, T, H = X.shape
    if H % num_heads:
        raise ValueError("the last axis must be divisible by num_heads")
    d = H // num_heads
    heads = torch.stack(torch.split(X, d, dim=-1), dim=1)  # (B, num_heads, T, d)
    return heads.flatten(0, 1)


def transpose_output(X, num_heads):
    BH, T, d = X.shape
    heads = X.unflatten(0, (BH // num_heads, num_heads))  # (B, num_heads, T, d)
    return torch.cat(heads.unbind(dim=1), dim=-1)


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
        queries = transpose_qkv(self.W_q(queries), h)
        keys = transpose_qkv(self.W_k(keys), h)
        values = transpose_qkv(self.W_v(values), h)
        if valid_lens is not None:
            lens = valid_lens.unsqueeze(1)  # (B, 1) or (B, 1, n_q)
            lens = lens.expand(lens.shape[0], h, *lens.shape[2:])
            valid_lens = lens.reshape(-1, *valid_lens.shape[1:])
        output = self.attention(queries, keys, values, valid_lens)
        w = self.attention.attention_weights
        self.attention_weights = w.reshape(-1, h, w.shape[1], w.shape[2])
        return transpose_output(output, h)
