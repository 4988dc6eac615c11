# style: keepdim max/sum, masked_fill with -inf, nan_to_num for empty rows
# bug: masked_softmax | masks with masked_fill_ on X itself, modifying the caller's scores in place
# expect: masked_softmax | place
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum."""
    X = X / temperature
    x_max = X.max(dim=dim, keepdim=True).values
    x_max = torch.where(torch.isfinite(x_max), x_max, torch.zeros_like(x_max))
    X_exp = torch.exp(X - x_max)
    return X_exp / X_exp.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax over the last axis of X that ignores keys past a valid length."""
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    n_k = X.shape[-1]
    valid_lens = valid_lens.to(X.device)
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None]
    keys = torch.arange(n_k, device=X.device)
    mask = keys[None, None, :] < valid_lens[:, :, None]
    scores = X.masked_fill_(~mask, float("-inf"))
    weights = softmax(scores, dim=-1, temperature=temperature)
    return torch.nan_to_num(weights, nan=0.0)
