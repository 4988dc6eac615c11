# style: d2l-like, expand keys to (n_q, n_k) first, then one path for both layouts
# bug: none
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    n_q = queries.shape[0]
    if keys.dim() == 1:
        keys = keys.unsqueeze(0).expand(n_q, -1)
    n_k = keys.shape[1]
    q = queries.repeat_interleave(n_k).reshape(n_q, n_k)
    return softmax(-((q - keys) * w) ** 2 / 2, dim=1)


def nadaraya_watson(queries, keys, values, w=1.0):
    attn = gaussian_kernel_weights(queries, keys, w=w)
    if values.dim() == 1:
        values = values.unsqueeze(0).expand_as(attn)
    return torch.sum(attn * values, dim=1)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        n_q, n_k = keys.shape
        self.attention_weights = gaussian_kernel_weights(queries, keys, w=self.w)
        pooled = torch.bmm(self.attention_weights.view(n_q, 1, n_k), values.view(n_q, n_k, 1))
        return pooled.view(n_q)
