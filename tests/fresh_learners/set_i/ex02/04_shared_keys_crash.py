# style: d2l-like, repeat_interleave queries by keys.shape[1]
# bug: gaussian_kernel_weights | assumes keys are (n_q, n_k) and reads keys.shape[1], so shared 1-D keys (n_k,) raise IndexError
# expect: gaussian_kernel_weights | shared keys (n_k,)
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k)."""
    n_k = keys.shape[1]
    queries = queries.repeat_interleave(n_k).reshape(-1, n_k)
    return softmax(-((queries - keys) * w) ** 2 / 2, dim=1)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    attn = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        return torch.matmul(attn, values)
    return torch.sum(attn * values, dim=1)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1), values.unsqueeze(-1)).reshape(-1)
