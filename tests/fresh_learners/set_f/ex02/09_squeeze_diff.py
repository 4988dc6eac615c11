# style: broadcasting with a squeeze() to tidy the difference matrix
# bug: gaussian_kernel_weights | squeeze() of the (n_q, n_k) differences also drops a size-1 axis: with n_q == 1 (or n_k == 1) the weights lose an axis and NWKernelRegression.forward raises in torch.bmm; runs when n_q, n_k > 1
# expect: gaussian_kernel_weights | squeeze
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    diff = (queries.reshape(-1, 1) - keys).squeeze()
    return softmax(-((diff * w) ** 2) / 2, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return torch.matmul(weights, values)
    return (weights * values).sum(-1)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
