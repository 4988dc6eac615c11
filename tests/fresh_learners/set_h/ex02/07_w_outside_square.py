# style: broadcasting, formula expanded by hand
# bug: gaussian_kernel_weights | multiplies the squared distance by w instead of squaring (distance * w), so w enters linearly
# expect: gaussian_kernel_weights | w inside the square
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    diff = queries.unsqueeze(1) - keys
    scores = -(diff ** 2) * w / 2
    return softmax(scores, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return torch.mv(weights, values)
    return (weights * values).sum(dim=-1)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
