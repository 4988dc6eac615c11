# bug: one maximum for the whole tensor instead of one per slice
# expect: softmax | whole tensor
"""Exercise 1 with torch.where and -inf."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Stable softmax from torch.exp and sum."""
    X = X / temperature
    m = X.max().detach()
    m = torch.where(m == float("-inf"), torch.zeros_like(m), m)
    ex = (X - m).exp()
    return ex / ex.sum(dim, keepdim=True).clamp(min=1e-30)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Keys past the valid length get -inf scores, hence weight 0."""
    if valid_lens is None:
        return softmax(X, -1, temperature)
    n_q, n_k = X.shape[1], X.shape[2]
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens.unsqueeze(1).expand(-1, n_q)
    keep = torch.arange(n_k).view(1, 1, n_k) < lens.unsqueeze(-1)
    scores = torch.where(keep, X, torch.full_like(X, float("-inf")))
    return softmax(scores, -1, temperature)
