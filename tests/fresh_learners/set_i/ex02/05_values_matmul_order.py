# style: vectorised with None-indexing, torch.mv style pooling
# bug: nadaraya_watson | with 1-D values pools as values @ weights (contracting over the query axis) instead of weights @ values: crashes when n_q != n_k, wrong (transposed weights) when n_q == n_k
# expect: nadaraya_watson | weights @ values
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k).

    queries (n_q,); keys (n_k,) shared by all queries, or (n_q, n_k) one row
    per query. Weight of key j for query i:

        softmax over j of  -((queries[i] - keys[i, j]) * w)**2 / 2
    """
    k = keys[None, :] if keys.dim() == 1 else keys
    d = (queries[:, None] - k) * w
    return softmax(-d * d / 2, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    attn = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return values @ attn
    return (attn * values).sum(-1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        attn = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = attn
        return torch.bmm(attn[:, None, :], values[:, :, None]).flatten()
