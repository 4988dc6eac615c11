# style: repeat keys, einsum pooling
# bug: gaussian_kernel_weights | normalises over the queries (dim=0) instead of over the keys
# expect: gaussian_kernel_weights | softmax over keys
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    n_q = queries.shape[0]
    if keys.ndim == 1:
        keys = keys.repeat(n_q, 1)
    q = queries.unsqueeze(1).expand_as(keys)
    return softmax(-0.5 * torch.square((q - keys) * w), dim=0)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.ndim == 1:
        return torch.einsum("qk,k->q", weights, values)
    return torch.einsum("qk,qk->q", weights, values)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        n_q = queries.shape[0]
        out = torch.bmm(self.attention_weights.view(n_q, 1, -1), values.view(n_q, -1, 1))
        return out.view(n_q)
