# style: python loop over queries, torch.stack of rows
# bug: gaussian_kernel_weights | multiplies the squared distance by w instead of squaring (x - k) * w: -(x - k)**2 * w / 2 (right only for w = 1)
# expect: gaussian_kernel_weights | w squared
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    rows = []
    for i in range(queries.shape[0]):
        k = keys if keys.dim() == 1 else keys[i]
        scores = -((queries[i] - k) ** 2) * w / 2
        rows.append(softmax(scores, dim=0))
    return torch.stack(rows, dim=0)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    out = []
    for i in range(queries.shape[0]):
        v = values if values.dim() == 1 else values[i]
        out.append(torch.dot(weights[i], v))
    return torch.stack(out)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        weights = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = weights
        pooled = torch.bmm(weights[:, None, :], values[:, :, None])  # (n_q, 1, 1)
        return pooled[:, 0, 0]
