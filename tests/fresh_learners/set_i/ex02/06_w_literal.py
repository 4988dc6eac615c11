# style: vectorised, small helper for the logits
# bug: nadaraya_watson | calls gaussian_kernel_weights(queries, keys, 1.0) with a literal 1.0 instead of passing w, so any w other than 1 is ignored
# expect: nadaraya_watson | pass w through
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def _gaussian_logits(queries, keys, w):
    if keys.ndim == 1:
        keys = keys.expand(queries.numel(), keys.numel())
    return -(((queries.reshape(-1, 1) - keys) * w) ** 2) / 2


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k)."""
    return softmax(_gaussian_logits(queries, keys, w), dim=1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    weights = gaussian_kernel_weights(queries, keys, 1.0)
    if values.ndim == 1:
        values = values.expand_as(weights)
    return (weights * values).sum(1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        weights = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = weights
        pooled = torch.bmm(weights.unsqueeze(1), values.unsqueeze(2))
        return pooled.squeeze(2).squeeze(1)
