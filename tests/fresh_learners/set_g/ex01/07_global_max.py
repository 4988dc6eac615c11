# style: vectorised, one max for the whole tensor
# bug: softmax | subtracts the global max X.max() instead of a max per slice along dim: rows far below the max underflow to 0/0 = NaN (e.g. [[1e4, 1e4 + 1], [0, 1]])
# expect: softmax | max per row
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
    n_k = X.shape[-1]
    if valid_lens.dim() == 1:
        lens = valid_lens[:, None, None]
    else:
        lens = valid_lens[:, :, None]
    keep = torch.arange(n_k, device=X.device)[None, None, :] < lens
    Xm = X.masked_fill(~keep, float("-inf"))
    w = softmax(Xm, dim=-1, temperature=temperature)
    return torch.where(keep, w, torch.zeros_like(w))
