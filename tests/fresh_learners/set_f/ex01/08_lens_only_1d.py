# style: vectorised, lengths broadcast as (B, 1, 1)
# bug: masked_softmax | treats valid_lens as (B,) only: valid_lens[:, None, None] makes a 4-D mask for per-query lengths and keep.expand_as(X) raises for any 2-D valid_lens (B, n_q); runs for None and (B,)
# expect: masked_softmax | 2-D
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
    n_k = X.shape[-1]
    keep = torch.arange(n_k, device=X.device)[None, None, :] < valid_lens[:, None, None]
    keep = keep.expand_as(X)
    scores = X.masked_fill(~keep, float("-inf"))
    weights = softmax(scores, dim=-1, temperature=temperature)
    return weights.masked_fill(~keep, 0.0)
