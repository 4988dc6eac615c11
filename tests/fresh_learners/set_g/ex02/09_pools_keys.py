# style: python loops over queries and keys
# bug: NWKernelRegression.forward | bmm pools the keys instead of the values
# expect: NWKernelRegression.forward | pool the values
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
    scores = torch.empty(n_q, n_k, dtype=torch.result_type(queries, keys))
    scores = scores.to(queries.device)
    rows = []
    for i in range(n_q):
        row = []
        for j in range(n_k):
            row.append(-((queries[i] - keys[i, j]) * w) ** 2 / 2)
        rows.append(torch.stack([r.reshape(()) for r in row]))
    scores = torch.stack(rows)
    return softmax(scores, dim=-1)


def nadaraya_watson(queries, keys, values, w=1.0):
    weights = gaussian_kernel_weights(queries, keys, w)
    n_q = queries.shape[0]
    if values.dim() == 1:
        values = values.unsqueeze(0).expand(n_q, -1)
    out = []
    for i in range(n_q):
        out.append((weights[i] * values[i]).sum())
    return torch.stack(out)


class NWKernelRegression(nn.Module):
    """Parametric Nadaraya-Watson: the kernel width w is a learned parameter."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(1))  # (1,)

    def forward(self, queries, keys, values):
        self.attention_weights = gaussian_kernel_weights(queries, keys, self.w)
        return torch.bmm(self.attention_weights.unsqueeze(1), keys.unsqueeze(-1)).reshape(-1)
