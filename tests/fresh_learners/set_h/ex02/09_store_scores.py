# style: forward computes the kernel inline, step by step
# bug: NWKernelRegression.forward | stores the raw kernel scores in self.attention_weights before the softmax instead of the weights
# expect: NWKernelRegression.forward | store weights after softmax
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    diff = queries.unsqueeze(-1) - keys
    return softmax(-((diff * w) ** 2) / 2, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return weights @ values
    return (weights * values).sum(-1)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        diff = queries.unsqueeze(-1) - keys
        self.attention_weights = -((diff * self.w) ** 2) / 2
        weights = softmax(self.attention_weights, dim=-1)
        return torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
