# style: per-query loop for the weights, einsum for pooling
# bug: none
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k).

    Weight of key j for query i: softmax over j of -((q_i - k_ij) * w)**2 / 2.
    """
    rows = []
    for i in range(queries.shape[0]):
        k_i = keys if keys.dim() == 1 else keys[i]
        logits = -0.5 * ((queries[i] - k_i) * w) ** 2
        rows.append(softmax(logits, dim=0))
    return torch.stack(rows, dim=0)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    alpha = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return torch.einsum("qk,k->q", alpha, values)
    return torch.einsum("qk,qk->q", alpha, values)


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
        alpha = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = alpha
        out = torch.bmm(alpha[:, None, :], values[:, :, None])
        return out[:, 0, 0]
