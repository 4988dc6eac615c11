# style: loop over queries, list comprehension, stack
# bug: gaussian_kernel_weights | logits are -w * (q - k)**2 / 2 (w outside the square) instead of -((q - k) * w)**2 / 2, wrong whenever w != 1 (including the learned w)
# expect: gaussian_kernel_weights | w inside the square
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights of each query over the keys, shape (n_q, n_k)."""
    out = []
    for i, q in enumerate(queries):
        row = keys if keys.dim() == 1 else keys[i]
        out.append(softmax(-w * (q - row) ** 2 / 2, dim=-1))
    return torch.stack(out)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Attention pooling: the kernel-weighted average of values, shape (n_q,)."""
    weights = gaussian_kernel_weights(queries, keys, w)
    out = []
    for i in range(weights.shape[0]):
        v = values if values.dim() == 1 else values[i]
        out.append((weights[i] * v).sum())
    return torch.stack(out)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys (n_q, n_k), values (n_q, n_k) -> (n_q,)."""
        weights = gaussian_kernel_weights(queries, keys, self.w)
        self.attention_weights = weights
        return torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)).view(-1)
