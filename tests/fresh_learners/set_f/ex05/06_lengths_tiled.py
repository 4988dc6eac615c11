# style: view + transpose + contiguous, lengths repeated through an index tensor
# bug: MultiHeadAttention.forward | tiles the lengths (index arange(B).repeat(num_heads): 0, 1, 0, 1, ...) instead of repeating each example's entry num_heads times in a row: heads get other examples' lengths when B > 1
# expect: MultiHeadAttention.forward | repeat_interleave
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    B, T, H = X.size()
    if H % num_heads != 0:
        raise ValueError(f"cannot split {H} features into {num_heads} heads")
    d = H // num_heads
    return X.contiguous().view(B, T, num_heads, d).transpose(1, 2).contiguous().view(B * num_heads, T, d)


def transpose_output(X, num_heads):
    BH, T, d = X.size()
    B = BH // num_heads
    return X.contiguous().view(B, num_heads, T, d).transpose(1, 2).contiguous().view(B, T, num_heads * d)


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
        B = queries.size(0)
        Q = transpose_qkv(self.W_q(queries), self.num_heads)
        K = transpose_qkv(self.W_k(keys), self.num_heads)
        V = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            index = torch.arange(B, device=valid_lens.device).repeat(self.num_heads)
            valid_lens = valid_lens[index]  # entry b repeated num_heads times in a row
        context = self.attention(Q, K, V, valid_lens)
        self.attention_weights = self.attention.attention_weights.view(
            B, self.num_heads, Q.size(1), K.size(1))
        return self.W_o(transpose_output(context, self.num_heads))
