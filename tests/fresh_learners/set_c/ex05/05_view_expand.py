# style: view + transpose, expand for lengths
# bug: none
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
    if X.size(-1) % num_heads != 0:
        raise ValueError(f"cannot split {X.size(-1)} features into {num_heads} heads")
    b, t, _ = X.shape
    out = X.view(b, t, num_heads, -1).transpose(1, 2).contiguous()
    return out.view(b * num_heads, t, -1)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d).

    The exact inverse of transpose_qkv.
    """
    bh, t, d = X.shape
    out = X.view(-1, num_heads, t, d).transpose(1, 2).contiguous()
    return out.view(-1, t, num_heads * d)


class MultiHeadAttention(nn.Module):
    """num_heads scaled dot-product attentions in parallel subspaces.

    temperature is handed to DotProductAttention (ex03), which divides every
    score by it; 1.0 in the published exercise. In a class your exercise
    variant gives you your own default (the Practice page and
    `python -m grader --variant N` show it): write it as the default here;
    the grader builds MultiHeadAttention without it.
    """

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
        """queries (B, n_q, q), keys (B, n_k, k), values (B, n_k, v) -> (B, n_q, num_hiddens).

        1. project with W_q, W_k, W_v and split into heads with transpose_qkv
        2. valid_lens, (B,) or (B, n_q), must apply to every head of its
           example: repeat each example's entry num_heads times in a row
        3. self.attention on all heads at once
        4. store self.attention_weights with shape (B, num_heads, n_q, n_k)
        5. merge the heads with transpose_output and mix them with W_o
        """
        nh = self.num_heads
        Q = transpose_qkv(self.W_q(queries), nh)
        K = transpose_qkv(self.W_k(keys), nh)
        V = transpose_qkv(self.W_v(values), nh)
        if valid_lens is not None:
            if valid_lens.dim() == 1:
                valid_lens = valid_lens.unsqueeze(1).expand(-1, nh).reshape(-1)
            else:
                valid_lens = valid_lens.unsqueeze(1).expand(-1, nh, -1).reshape(-1, valid_lens.shape[-1])
        heads = self.attention(Q, K, V, valid_lens)
        attn = self.attention.attention_weights
        self.attention_weights = attn.view(queries.shape[0], nh, attn.shape[-2], attn.shape[-1])
        merged = transpose_output(heads, nh)
        return self.W_o(merged)
