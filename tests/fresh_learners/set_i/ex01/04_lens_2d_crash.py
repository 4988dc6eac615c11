# style: d2l-like, flatten rows and repeat the lengths for every query
# bug: masked_softmax | valid_lens is always repeat_interleave'd n_q times (no dim check), so a (B, n_q) valid_lens is flattened to B * n_q * n_q lengths and the mask no longer matches the rows: crash with 2-D valid_lens
# expect: masked_softmax | valid_lens (B, n_q)
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum."""
    X = X / temperature
    X_max = X.max(dim=dim, keepdim=True).values
    X_max = torch.where(torch.isinf(X_max), torch.zeros_like(X_max), X_max)
    X_exp = torch.exp(X - X_max)
    return X_exp / X_exp.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length.

    X: scores (B, n_q, n_k); valid_lens: None, (B,) or (B, n_q).
    """
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    lens = torch.repeat_interleave(valid_lens, n_q)
    flat = X.reshape(-1, n_k)
    mask = torch.arange(n_k, device=X.device)[None, :] < lens[:, None]
    flat = flat.masked_fill(~mask, -1e6)
    weights = softmax(flat, dim=-1, temperature=temperature) * mask
    return weights.reshape(B, n_q, n_k)
