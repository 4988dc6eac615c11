# style: vectorised, expand shared keys, matmul pooling
# bug: gaussian_kernel_weights | normalises with softmax over dim=0 (across queries) instead of over the keys (dim=1), so rows do not sum to 1
# expect: gaussian_kernel_weights | softmax over keys
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
    n_q = queries.shape[0]
    if keys.dim() == 1:
        keys = keys.unsqueeze(0).expand(n_q, -1)
    scores = -((queries.unsqueeze(-1) - keys) * w).pow(2) / 2
    return softmax(scores, dim=0)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return torch.mv(weights, values)
    return (weights * values).sum(dim=1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,).

        Store the weights (n_q, n_k) in self.attention_weights, and pool the
        values with batched matrix multiplication (torch.bmm):
        (n_q, 1, n_k) @ (n_q, n_k, 1) -> (n_q, 1, 1).
        """
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1),
                         values.unsqueeze(-1)).reshape(-1)
