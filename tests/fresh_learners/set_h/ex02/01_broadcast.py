# style: broadcasting with unsqueeze, matmul/sum for pooling
# bug: none
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k)."""
    diff = queries.unsqueeze(-1) - keys          # (n_q, 1) - (n_k,) or (n_q, n_k)
    scores = -((diff * w) ** 2) / 2
    return softmax(scores, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return weights @ values
    return (weights * values).sum(dim=-1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        out = torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1))
        return out.reshape(-1)
