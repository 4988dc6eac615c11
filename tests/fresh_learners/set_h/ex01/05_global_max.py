# style: short vectorised, one max for the whole tensor
# bug: softmax | subtracts the maximum of the whole tensor instead of each slice's maximum, so ordinary rows next to 1e4 rows underflow to 0/0
# expect: softmax | max along dim
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    finite = X[torch.isfinite(X)]
    shift = finite.max() if finite.numel() else X.new_zeros(())
    e = torch.exp(X - shift)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    if valid_lens.dim() == 1:
        valid_lens = valid_lens[:, None]
    mask = torch.arange(X.shape[-1], device=X.device)[None, None, :] < valid_lens[:, :, None]
    w = softmax(X.masked_fill(~mask, float("-inf")), temperature=temperature)
    return torch.nan_to_num(w, nan=0.0) * mask
