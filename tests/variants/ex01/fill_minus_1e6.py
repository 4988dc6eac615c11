# style: max().values shift, -1e6 fill, masked keys zeroed after the softmax
"""Exercise 1 with a -1e6 fill (d2l style) and explicit zeros for masked keys."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """exp(X / T - max) / sum along dim."""
    X = X / temperature
    X_max = X.max(dim=dim, keepdim=True).values
    X_max = torch.where(torch.isinf(X_max), torch.zeros_like(X_max), X_max)  # all -inf slice
    e = torch.exp(X - X_max)
    s = e.sum(dim=dim, keepdim=True)
    return e / torch.where(s == 0, torch.ones_like(s), s)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Masked softmax over the last axis."""
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1:
        lens = torch.repeat_interleave(valid_lens, n_q).reshape(B, n_q)
    else:
        lens = valid_lens
    mask = torch.arange(n_k, device=X.device)[None, None, :] < lens[:, :, None]
    weights = softmax(X.masked_fill(~mask, -1e6), dim=-1, temperature=temperature)
    return weights * mask  # masked keys and empty rows: exactly 0
