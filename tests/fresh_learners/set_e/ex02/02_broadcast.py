# style: broadcasting with None-indexing, expand for shared keys
# bug: none
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k)."""
    if keys.ndim == 1:
        keys = keys[None, :].expand(queries.shape[0], -1)
    diff = queries[:, None] - keys
    scores = -0.5 * (diff * w) ** 2
    return softmax(scores, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    weights = gaussian_kernel_weights(queries, keys, w=w)
    if values.ndim == 1:
        values = values[None, :].expand_as(weights)
    return (weights * values).sum(-1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        weights = gaussian_kernel_weights(queries, keys, w=self.w)
        self.attention_weights = weights
        pooled = torch.bmm(weights[:, None, :], values[:, :, None])
        return pooled[:, 0, 0]
