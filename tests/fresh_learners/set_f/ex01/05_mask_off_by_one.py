# style: flatten to rows, repeat_interleave(dim=0) for per-example lengths, torch.where with -inf
# bug: masked_softmax | keeps key j when j <= valid length (off by one): one extra key gets weight, and a row of valid length 0 still reads key 0
# expect: masked_softmax | j < valid
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    X_max = X.max(dim, keepdim=True)[0].detach()
    X_max = torch.nan_to_num(X_max, neginf=0.0, posinf=0.0)
    numer = (X - X_max).exp()
    return numer / numer.sum(dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, -1, temperature)
    shape = X.shape
    if valid_lens.dim() == 1:
        lens = torch.repeat_interleave(valid_lens, shape[1], dim=0)
    else:
        lens = valid_lens.reshape(-1)
    rows = X.reshape(-1, shape[-1])
    cols = torch.arange(shape[-1], device=X.device)
    valid = cols[None, :] <= lens.to(X.device)[:, None]
    neg_inf = torch.full_like(rows, float("-inf"))
    w = softmax(torch.where(valid, rows, neg_inf), -1, temperature)
    w = torch.where(valid, w, torch.zeros_like(w))
    return w.reshape(shape)
