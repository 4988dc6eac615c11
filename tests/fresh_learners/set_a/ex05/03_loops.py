# style: explicit python loops over examples and heads
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
    batch_size, num_steps, num_cols = X.shape
    if num_cols % num_heads != 0:
        raise ValueError("cannot split %d columns into %d heads" % (num_cols, num_heads))
    d = num_cols // num_heads
    rows = []
    for b in range(batch_size):
        for head in range(num_heads):
            rows.append(X[b, :, head * d:(head + 1) * d])
    return torch.stack(rows, dim=0)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d).

    The exact inverse of transpose_qkv.
    """
    total, num_steps, d = X.shape
    batch_size = total // num_heads
    examples = []
    for b in range(batch_size):
        parts = [X[b * num_heads + head] for head in range(num_heads)]
        examples.append(torch.cat(parts, dim=-1))
    return torch.stack(examples, dim=0)


def _repeat_lens(valid_lens, num_heads):
    """Repeat each example's lengths num_heads times in a row."""
    pieces = []
    for b in range(valid_lens.shape[0]):
        for _ in range(num_heads):
            pieces.append(valid_lens[b])
    return torch.stack(pieces, dim=0)


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
        Q = transpose_qkv(self.W_q(queries), self.num_heads)
        K = transpose_qkv(self.W_k(keys), self.num_heads)
        V = transpose_qkv(self.W_v(values), self.num_heads)
        if valid_lens is not None:
            valid_lens = _repeat_lens(valid_lens, self.num_heads)
        heads_out = self.attention(Q, K, V, valid_lens)
        weights = self.attention.attention_weights
        batch_size = queries.shape[0]
        self.attention_weights = torch.stack(
            [weights[b * self.num_heads:(b + 1) * self.num_heads] for b in range(batch_size)]
        )
        return self.W_o(transpose_output(heads_out, self.num_heads))
