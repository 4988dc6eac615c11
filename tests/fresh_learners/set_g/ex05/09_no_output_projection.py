# style: view with transpose
# bug: MultiHeadAttention.forward | returns the merged heads without the output projection W_o
# expect: MultiHeadAttention.forward | W_o
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention

def transpose_qkv(X, num_heads):
    B, T, H = X.shape
    if H % num_heads != 0:
        raise ValueError(f"{H} % {num_heads} != 0")
    return X.view(B, T, num_heads, -1).transpose(1, 2).contiguous().view(B * num_heads, T, -1)


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
        B = queries.shape[0]
        heads = [transpose_qkv(W(x), self.num_heads)
                 for W, x in ((self.W_q, queries), (self.W_k, keys), (self.W_v, values))]
        lens = None
        if valid_lens is not None:
            lens = valid_lens.repeat_interleave(self.num_heads, dim=0)
        out = self.attention(*heads, valid_lens=lens)
        w = self.attention.attention_weights
        self.attention_weights = w.view(B, self.num_heads, w.shape[1], w.shape[2])
        return transpose_output(out, self.num_heads)
