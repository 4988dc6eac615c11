# style: per-head slicing loops with torch.stack / torch.cat
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
    H = X.shape[-1]
    if H % num_heads != 0:
        raise ValueError("last dimension must be divisible by num_heads")
    d = H // num_heads
    rows = []
    for b in range(X.shape[0]):
        for h in range(num_heads):
            rows.append(X[b, :, h * d:(h + 1) * d])
    return torch.stack(rows, dim=0)


def transpose_output(X, num_heads):
    """Merge the heads back: (B * num_heads, T, d) -> (B, T, num_heads * d).

    The exact inverse of transpose_qkv.
    """
    batch = X.shape[0] // num_heads
    examples = []
    for b in range(batch):
        heads = [X[b * num_heads + h] for h in range(num_heads)]
        examples.append(torch.cat(heads, dim=-1))
    return torch.stack(examples, dim=0)


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
        weights = self.attention.attention_weights
        n_q, n_k = weights.shape[1], weights.shape[2]
        self.attention_weights = weights.reshape(-1, self.num_heads, n_q, n_k)
        output_concat = transpose_output(output, self.num_heads)
        return self.W_o(output_concat)
