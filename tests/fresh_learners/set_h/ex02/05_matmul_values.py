# style: matrix product for the pooling
# bug: nadaraya_watson | pools with weights @ values for both layouts, which crashes for (n_q, n_k) values when n_q != n_k and is wrong when they are equal
# expect: nadaraya_watson | values (n_q, n_k)
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    d = queries.reshape(-1, 1) - keys
    return softmax(-(d * w) ** 2 / 2, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    out = torch.matmul(weights, values)
    return out if out.dim() == 1 else out.diagonal()


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
