# style: broadcasting queries[:, None] against keys, matrix-vector pooling
# bug: gaussian_kernel_weights | normalises with softmax over dim=0 (over the queries) instead of over the keys (last axis)
# expect: gaussian_kernel_weights | dim
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    diff = queries.unsqueeze(-1) - keys  # (n_q, 1) - (n_k,) or (n_q, n_k) -> (n_q, n_k)
    return softmax(-((diff * w) ** 2) / 2, dim=0)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return weights @ values
    return (weights * values).sum(dim=-1)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
