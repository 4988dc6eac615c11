# style: d2l-like, repeat_interleave the queries into a (n_q, n_k) grid
# bug: none
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k).

    queries (n_q,); keys (n_k,) shared by all queries, or (n_q, n_k) one row
    per query.
    """
    n_q = queries.shape[0]
    if keys.dim() == 1:
        keys = keys.repeat((n_q, 1))
    n_k = keys.shape[1]
    queries = queries.repeat_interleave(n_k).reshape((-1, n_k))
    return softmax(-((queries - keys) * w) ** 2 / 2, dim=1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    attention_weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        values = values.repeat((queries.shape[0], 1))
    return torch.bmm(attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,).

        Store the weights (n_q, n_k) in self.attention_weights, and pool the
        values with batched matrix multiplication (torch.bmm).
        """
        queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
        self.attention_weights = softmax(-((queries - keys) * self.w) ** 2 / 2, dim=1)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
