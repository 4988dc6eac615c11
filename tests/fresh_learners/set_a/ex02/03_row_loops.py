# style: explicit per-query loops with torch.stack and torch.dot
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

    w may be a float or a tensor of shape (1,).
    """
    rows = []
    for i in range(queries.shape[0]):
        key_row = keys if keys.dim() == 1 else keys[i]
        scaled = (queries[i] - key_row) * w
        rows.append(softmax(-0.5 * scaled * scaled, dim=0))
    return torch.stack(rows)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    weights = gaussian_kernel_weights(queries, keys, w)
    out = []
    for i in range(weights.shape[0]):
        value_row = values if values.dim() == 1 else values[i]
        out.append(torch.dot(weights[i], value_row))
    return torch.stack(out)


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
        q = queries[:, None]  # (n_q, 1)
        z = (q - keys) * self.w
        attention = softmax(-0.5 * z.pow(2), dim=-1)
        self.attention_weights = attention
        result = torch.bmm(attention[:, None, :], values[:, :, None])
        return result.squeeze(-1).squeeze(-1)
