# style: amax + torch.where with a large negative fill, multiply by mask afterwards
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum."""
    z = X / temperature
    m = torch.amax(z, dim=dim, keepdim=True)
    m = torch.nan_to_num(m, nan=0.0, posinf=0.0, neginf=0.0)
    e = torch.exp(z - m)
    total = torch.sum(e, dim=dim, keepdim=True)
    return e / total


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax over the last axis of X that ignores keys past a valid length."""
    if valid_lens is None:
        return softmax(X, -1, temperature)
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1:
        lens = valid_lens.reshape(B, 1, 1)
    else:
        lens = valid_lens.reshape(B, n_q, 1)
    positions = torch.arange(n_k, device=X.device).reshape(1, 1, n_k)
    keep = positions < lens.to(X.device)
    filled = torch.where(keep, X, torch.full_like(X, -1e6))
    w = softmax(filled, -1, temperature)
    return w * keep.to(X.dtype)
