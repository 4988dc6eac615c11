"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling (chapter 2)."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    """Attention weights (n_q, n_k): softmax over keys of -((q - k) * w)**2 / 2.

    The default w is 1.0 in the published exercise; a class variant gives each learner their own default
    (course/common/exercise_variants.py), written here and in nadaraya_watson."""
    if keys.dim() == 1:
        keys = keys.unsqueeze(0).expand(queries.shape[0], -1)  # (n_q, n_k)
    n_k = keys.shape[1]
    # row i holds query i repeated once per key (each query in place: q0, q0, ..., q1, q1, ...)
    diffs = queries.repeat_interleave(n_k).reshape(-1, n_k) - keys  # (n_q, n_k)
    return softmax(-((diffs * w) ** 2) / 2, dim=1)  # (n_q, n_k)


def nadaraya_watson(queries, keys, values, w=1.0):
    """Kernel-weighted average of values for each query -> (n_q,)."""
    weights = gaussian_kernel_weights(queries, keys, w)  # (n_q, n_k)
    if values.dim() == 1:
        values = values.unsqueeze(0).expand_as(weights)  # (n_q, n_k)
    return (weights * values).sum(dim=1)  # (n_q,)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is learned."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        """queries (n_q,), keys and values (n_q, n_k) -> (n_q,)."""
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)  # (n_q, n_k)
        pooled = torch.bmm(
            self.attention_weights.unsqueeze(1),  # (n_q, 1, n_k)
            values.unsqueeze(-1),  # (n_q, n_k, 1)
        )  # (n_q, 1, 1)
        return pooled.reshape(-1)  # (n_q,)
