# style: vectorised broadcasting, expand shared keys, matrix-vector pooling
# bug: none
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
    if keys.dim() == 1:
        keys = keys.unsqueeze(0).expand(queries.shape[0], -1)
    diff = queries.unsqueeze(1) - keys            # (n_q, n_k)
    return softmax(-((diff * w) ** 2) / 2, dim=1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return weights @ values
    return (weights * values).sum(dim=1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        pooled = torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1))
        return pooled.reshape(-1)
