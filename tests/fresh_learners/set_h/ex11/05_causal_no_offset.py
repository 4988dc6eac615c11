# style: inline forward, tril causal mask on the main diagonal
# bug: GroupedQueryAttention.forward | the causal mask is tril with diagonal 0 (j <= i), ignoring the offset n_k - n_q, so cached steps read only the first keys.
# expect: GroupedQueryAttention | causal offset n_k - n_q
"""Exercise 11: a cached decoding step with grouped key/value heads (chapter 12)."""

import torch
from torch import nn


def repeat_kv(X, num_groups):
    """(B, num_kv_heads, T, d) -> (B, num_kv_heads * num_groups, T, d)."""
    heads = [X[:, j:j + 1] for j in range(X.shape[1]) for _ in range(num_groups)]
    return torch.cat(heads, dim=1)


def _grouped_attention(q, k, v, num_groups, dropout, valid_lens, causal):
    """q (B, H, n_q, d), k and v (B, H_kv, n_k, d) -> (context (B, H, n_q, d), weights)."""
    k = repeat_kv(k, num_groups)
    v = repeat_kv(v, num_groups)
    d_head = q.shape[-1]
    n_q, n_k = q.shape[-2], k.shape[-2]
    scores = torch.matmul(q, k.transpose(-1, -2)) / torch.sqrt(torch.tensor(float(d_head)))
    if valid_lens is not None:
        lens = valid_lens.reshape(-1, 1, 1, 1)
        key_ids = torch.arange(n_k, device=q.device).reshape(1, 1, 1, -1)
        scores = scores.masked_fill(key_ids >= lens, float("-inf"))
    if causal:
        allowed = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = scores.softmax(dim=-1)
    return dropout(weights) @ v, weights


class GroupedQueryAttention(nn.Module):
    """Multi-head self-attention whose keys and values have num_kv_heads heads."""

    def __init__(self, num_hiddens, num_heads, num_kv_heads=2, dropout=0.0, bias=False):
        super().__init__()
        if num_hiddens % num_heads != 0 or num_heads % num_kv_heads != 0:
            raise ValueError(
                f"need num_heads | num_hiddens and num_kv_heads | num_heads "
                f"(got {num_hiddens}, {num_heads}, {num_kv_heads})"
            )
        d_head = num_hiddens // num_heads
        self.num_heads, self.num_kv_heads, self.d_head = num_heads, num_kv_heads, d_head
        self.W_q = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.W_k = nn.Linear(num_hiddens, num_kv_heads * d_head, bias=bias)
        self.W_v = nn.Linear(num_hiddens, num_kv_heads * d_head, bias=bias)
        self.W_o = nn.Linear(num_hiddens, num_hiddens, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None, causal=False):
        B, n_q, D = queries.shape
        n_k = keys.shape[1]
        q = self.W_q(queries).reshape(B, n_q, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_k(keys).reshape(B, n_k, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_v(values).reshape(B, n_k, self.num_kv_heads, self.d_head).transpose(1, 2)
        ctx, w = _grouped_attention(q, k, v, self.num_heads // self.num_kv_heads, self.dropout,
                                    valid_lens, causal)
        self.attention_weights = w
        ctx = ctx.transpose(1, 2).contiguous().view(B, n_q, D)
        return self.W_o(ctx)

    def step(self, x, cache=None):
        B, n, D = x.shape
        k = self.W_k(x).reshape(B, n, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_v(x).reshape(B, n, self.num_kv_heads, self.d_head).transpose(1, 2)
        if cache is not None:
            k = torch.cat((cache[0], k), dim=2)
            v = torch.cat((cache[1], v), dim=2)
        q = self.W_q(x).reshape(B, n, self.num_heads, self.d_head).transpose(1, 2)
        ctx, w = _grouped_attention(q, k, v, self.num_heads // self.num_kv_heads, self.dropout, None, True)
        self.attention_weights = w
        out = self.W_o(ctx.transpose(1, 2).contiguous().view(B, n, D))
        return out, (k, v)
