# style: vectorised keepdim max, boolean mask from arange broadcasting
# bug: masked_softmax | calls softmax(scores, dim=-1, temperature=1.0) with the published temperature typed in instead of passing its temperature parameter on: any other temperature is ignored when valid_lens is given
# expect: masked_softmax | temperature
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    m = X.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
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
    weights = softmax(scores, dim=-1, temperature=1.0)
    return torch.where(keep, weights, torch.zeros_like(weights))
