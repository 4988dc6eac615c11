# style: vectorised keepdim max, boolean mask from arange broadcasting
# bug: softmax | subtracts the global maximum X.max() of the whole tensor instead of one maximum per slice along dim: a batch mixing rows near 1e4 with ordinary rows gives NaN in the ordinary rows
# expect: softmax | along dim
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    m = X.max()
    e = torch.exp(X - m)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    lens = valid_lens.to(X.device)
    if lens.dim() == 1:
        lens = lens[:, None, None]  # (B, 1, 1)
    else:
        lens = lens[:, :, None]  # (B, n_q, 1)
    keep = torch.arange(n_k, device=X.device)[None, None, :] < lens  # (B, n_q or 1, n_k)
    keep = keep.expand(B, n_q, n_k)
    scores = X.masked_fill(~keep, float("-inf"))
    weights = softmax(scores, dim=-1, temperature=temperature)
    return torch.where(keep, weights, torch.zeros_like(weights))
