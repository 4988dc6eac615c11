# style: view + transpose(1,2)
# bug: MultiHeadAttention.forward | returns the merged heads without mixing them through W_o
# expect: MultiHeadAttention.forward | W_o
"""Exercise 5: multi-head attention (chapter 5, "Multi-head attention")."""

import torch
from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (B, T, H) -> (B * num_heads, T, H / num_heads).

    Row b * num_heads + h must hold head h of example b, and head h is the
    slice X[b, :, h * d:(h + 1) * d] with d = H / num_heads. Careful: a plain
    reshape to (B * num_heads, T, d) mixes positions; the head axis must be
    moved next to the batch axis first. Raise ValueError when H is not
    divisible by num_heads.
    """
    B, T, H = X.shape
    if H % num_heads:
        raise ValueError(f"cannot split {H} features into {num_heads} heads")
    head_dim = H // num_heads
    return X.view(B, T, num_heads, head_dim).transpose(1, 2).contiguous().view(B * num_heads, T, head_dim)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d).

    The exact inverse of transpose_qkv.
    """
    BH, T, head_dim = X.shape
    B = BH // num_heads
    return X.view(B, num_heads, T, head_dim).transpose(1, 2).contiguous().view(B, T, num_heads * head_dim)


class MultiHeadAttention(nn.Module):
    """num_heads scaled dot-product attentions in parallel subspaces."""

    def __init__(self, key_size, query_size, value_size, num_hiddens, num_heads, dropout, bias=False):
        super().__init__()
        if num_hiddens % num_heads != 0:
            raise ValueError(
                f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads}): "
                "each head gets num_hiddens / num_heads dimensions"
            )
        self.num_heads = num_heads
        self.attention = DotProductAttention(dropout)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=bias)
        self.W_k = nn.Linear(key_size, num_hiddens, bias=bias)
        self.W_v = nn.Linear(value_size, num_hiddens, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, num_hiddens).

        1. project with W_q, W_k, W_v and split into heads with transpose_qkv
        2. valid_lens, (B,) or (B, n_q), must apply to every head of its
           example: repeat each example's entry num_heads times in a row
        3. self.attention on all heads at once
        4. store self.attention_weights with shape (B, num_heads, n_q, n_k)
        5. merge the heads with transpose_output and mix them with W_o
        """
        B, n_q, _ = queries.shape
        n_k = keys.shape[1]
        h = self.num_heads
        q = transpose_qkv(self.W_q(queries), h)
        k = transpose_qkv(self.W_k(keys), h)
        v = transpose_qkv(self.W_v(values), h)
        lens = None
        if valid_lens is not None:
            lens = valid_lens.unsqueeze(1).expand(B, h, *valid_lens.shape[1:])
            lens = lens.reshape(B * h, *valid_lens.shape[1:])
        out = self.attention(q, k, v, lens)
        self.attention_weights = self.attention.attention_weights.view(B, h, n_q, n_k)
        return transpose_output(out, h)
