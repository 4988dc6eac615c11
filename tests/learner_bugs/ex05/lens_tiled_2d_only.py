# bug: per-query lengths tiled with repeat (only the (B, n_q) case)
# expect: MultiHeadAttention.forward | repeat_interleave
"""Exercise 5."""

from torch import nn

from .ex03_scoring import DotProductAttention


def transpose_qkv(X, num_heads):
    """Split heads with view and transpose."""
    B, T, H = X.shape
    if H % num_heads:
        raise ValueError(f"{H} is not divisible by {num_heads}")
    return X.view(B, T, num_heads, H // num_heads).transpose(1, 2).contiguous().view(B * num_heads, T, -1)


def transpose_output(X, num_heads):
    """Merge heads with view and transpose."""
    BH, T, d = X.shape
    return X.view(BH // num_heads, num_heads, T, d).transpose(1, 2).contiguous().view(BH // num_heads, T, -1)


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
        B, n_q, n_k, h = queries.shape[0], queries.shape[1], keys.shape[1], self.num_heads
        q = transpose_qkv(self.W_q(queries), h)
        k = transpose_qkv(self.W_k(keys), h)
        v = transpose_qkv(self.W_v(values), h)
        if valid_lens is not None:
            if valid_lens.dim() == 1:
                valid_lens = valid_lens[:, None].expand(B, h).reshape(B * h)
            else:
                valid_lens = valid_lens.repeat(h, 1)
        out = self.attention(q, k, v, valid_lens)
        self.attention_weights = self.attention.attention_weights.view(B, h, n_q, n_k)
        return self.W_o(transpose_output(out, h))
