# style: broadcasting with None indexing, einsum pooling
# bug: NWKernelRegression.forward | stores the raw scores (before the softmax) in self.attention_weights
# expect: NWKernelRegression.forward | attention_weights
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

    w may be a float or a tensor of shape (1,). Its default is 1.0 in the
    published exercise. In a class your exercise variant gives you your own
    default w (the Practice page and `python -m grader --variant N` show
    it): write it as the default of w here and in nadaraya_watson; the
    grader calls both without w where a check leaves it out.
    """
    if keys.ndim == 1:
        diff = queries[:, None] - keys[None, :]
    else:
        diff = queries[:, None] - keys
    scores = -0.5 * (diff * w).pow(2)
    return softmax(scores, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,).

    keys and values are both (n_k,) or both (n_q, n_k).
    """
    weights = gaussian_kernel_weights(queries, keys, w=w)
    if values.ndim == 1:
        return torch.einsum("qk,k->q", weights, values)
    return torch.einsum("qk,qk->q", weights, values)


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
        scores = -0.5 * ((queries[:, None] - keys) * self.w).pow(2)
        self.attention_weights = scores
        weights = softmax(scores, dim=-1)
        pooled = torch.bmm(weights[:, None, :], values[:, :, None])  # (n_q, 1, 1)
        return pooled[:, 0, 0]
