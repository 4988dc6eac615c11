# style: loops, no divisibility check
# bug: transpose_qkv | no ValueError when H is not divisible by num_heads (uses floor division and silently drops columns)
# expect: transpose_qkv | ValueError
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """(B, T, H) -> (B * num_heads, T, H / num_heads)."""
    B, T, H = X.shape
    d = H // num_heads
    rows = []
    for b in range(B):
        for h in range(num_heads):
            rows.append(X[b, :, h * d:(h + 1) * d])
    return torch.stack(rows, dim=0)


def transpose_output(X, num_heads):
    """(B * num_heads, T, d) -> (B, T, num_heads * d)."""
    B = X.shape[0] // num_heads
    examples = []
    for b in range(B):
        heads = [X[b * num_heads + h] for h in range(num_heads)]
        examples.append(torch.cat(heads, dim=-1))
    return torch.stack(examples, dim=0)


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
        queries = transpose_qkv(self.W_q(queries), self.num_heads)
        keys = transpose_qkv(self.W_k(keys), self.num_heads)
        values = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            repeated = []
            for b in range(valid_lens.shape[0]):
                for _ in range(self.num_heads):
                    repeated.append(valid_lens[b])
            valid_lens = torch.stack(repeated, dim=0)
        output = self.attention(queries, keys, values, valid_lens)
        attn = self.attention.attention_weights
        B = output.shape[0] // self.num_heads
        self.attention_weights = torch.stack(
            [attn[b * self.num_heads:(b + 1) * self.num_heads] for b in range(B)], dim=0
        )
        return self.W_o(transpose_output(output, self.num_heads))
