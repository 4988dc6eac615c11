# style: unsqueeze + einsum, explicit helper to compute squared distances
# bug: gaussian_kernel_weights | softmax over the queries (dim 0) instead of over the keys
# expect: gaussian_kernel_weights | dim
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def _scaled_sq_dist(queries, keys, w):
    if keys.dim() == 1:
        keys = keys.unsqueeze(0)
    return ((queries.unsqueeze(1) - keys) * w).pow(2)


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k)."""
    logits = _scaled_sq_dist(queries, keys, w) / -2
    return softmax(logits, dim=0)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    A = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return torch.einsum("qk,k->q", A, values)
    return torch.einsum("qk,qk->q", A, values)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        A = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = A
        out = torch.bmm(A.unsqueeze(1), values.unsqueeze(2))
        return out.squeeze(2).squeeze(1)
