# style: unflatten / movedim / flatten
"""Exercise 5."""

from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """(B, T, H) -> (B * heads, T, H / heads) with unflatten and movedim."""
    if X.shape[-1] % num_heads:
        raise ValueError("num_heads must divide the last axis")
    return X.unflatten(-1, (num_heads, -1)).movedim(2, 1).flatten(0, 1)


def transpose_output(X, num_heads):
    """(B * heads, T, d) -> (B, T, heads * d)."""
    return X.unflatten(0, (-1, num_heads)).movedim(1, 2).flatten(2)


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
        heads = self.num_heads
        q, k, v = (transpose_qkv(proj(x), heads) for proj, x in
                   ((self.W_q, queries), (self.W_k, keys), (self.W_v, values)))
        lens = None if valid_lens is None else valid_lens.repeat_interleave(heads, dim=0)
        out = self.attention(q, k, v, lens)
        self.attention_weights = self.attention.attention_weights.unflatten(0, (-1, heads))
        return self.W_o(transpose_output(out, heads))
