# style: vectorised, keepdim max, boolean mask with torch.where
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum."""
    X = X / temperature
    m = X.amax(dim=dim, keepdim=True)
    # a slice that is entirely -inf would give -inf - -inf = nan
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(X - m)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax over the last axis of X that ignores keys past a valid length."""
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    n_k = X.shape[-1]
    valid_lens = torch.as_tensor(valid_lens, device=X.device)
    if valid_lens.dim() == 1:
        lens = valid_lens[:, None, None]          # (B, 1, 1)
    else:
        lens = valid_lens[:, :, None]             # (B, n_q, 1)
    keys = torch.arange(n_k, device=X.device)
    mask = keys < lens                            # (B, n_q or 1, n_k)
    X = X / temperature
    X_masked = torch.where(mask, X, torch.full_like(X, float("-inf")))
    m = X_masked.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(X_masked - m)
    s = e.sum(dim=-1, keepdim=True)
    return torch.where(s > 0, e / s.clamp_min(torch.finfo(X.dtype).tiny), torch.zeros_like(e))
