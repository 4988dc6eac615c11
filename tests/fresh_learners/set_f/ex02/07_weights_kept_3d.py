# style: d2l-style repeat of queries, expand of shared keys, einsum pooling
# bug: NWKernelRegression.forward | stores self.attention_weights with the bmm shape (n_q, 1, n_k) instead of (n_q, n_k)
# expect: NWKernelRegression.forward | (n_q, n_k)
"""Exercise 2: Nadaraya-Watson kernel regression as attention pooling
(chapter 2, "Attention cues, query-key-value and Nadaraya-Watson")."""

import torch
from torch import nn

from .ex01_softmax import softmax


def gaussian_kernel_weights(queries, keys, w=1.0):
    n_q = queries.shape[0]
    if keys.dim() == 1:
        keys = keys.unsqueeze(0).expand(n_q, -1)
    n_k = keys.shape[1]
    q = queries.repeat_interleave(n_k).reshape(n_q, n_k)
    if not torch.is_tensor(w):
        w = torch.tensor(w, dtype=queries.dtype, device=queries.device)
    return softmax(-0.5 * torch.square((q - keys) * w), dim=1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    if values.dim() == 1:
        values = values.unsqueeze(0).expand_as(weights)
    return torch.einsum("qk,qk->q", weights, values)


class NWKernelRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, w=self.w).unsqueeze(1)
        out = torch.bmm(self.attention_weights, values.unsqueeze(2))
        return out.squeeze(2).squeeze(1)
