# style: small vectorised functions
# bug: nadaraya_watson | calls gaussian_kernel_weights with a literal w=1.0 instead of passing its own w through
# expect: nadaraya_watson | pass w through
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    diff = queries[:, None] - keys
    return softmax(-0.5 * (diff * w) ** 2, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w=1.0)
    if values.dim() == 1:
        values = values[None, :]
    return (weights * values).sum(-1)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        weights = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = weights
        return torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)).squeeze(-1).squeeze(-1)
