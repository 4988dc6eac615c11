# style: vectorised with einops-like explicit unsqueeze/squeeze steps
# bug: NWKernelRegression.forward | squeezes only the middle axis of the bmm result, returning (n_q, 1) instead of (n_q,)
# expect: NWKernelRegression.forward | output shape (n_q,)
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
    q = queries.unsqueeze(1)                     # (n_q, 1)
    k = keys.unsqueeze(0) if keys.dim() == 1 else keys
    logits = -0.5 * ((q - k) * w) ** 2          # (n_q, n_k)
    return softmax(logits, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    weights = gaussian_kernel_weights(queries, keys, w)
    v = values.unsqueeze(0) if values.dim() == 1 else values
    return (weights * v).sum(dim=-1)


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
        weights = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = weights
        pooled = torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1))   # (n_q, 1, 1)
        return pooled.squeeze(1)
