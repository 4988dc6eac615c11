# style: explicit python loops over rows
# bug: masked_softmax | keeps keys j <= valid length (slice :L + 1) instead of j < valid length
# expect: masked_softmax | j < valid length
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    Xt = X.movedim(dim, -1)
    flat = Xt.reshape(-1, Xt.shape[-1])
    out = torch.empty_like(flat)
    for r in range(flat.shape[0]):
        row = flat[r]
        m = row.max()
        if torch.isinf(m) and m < 0:
            m = torch.zeros((), dtype=row.dtype)
        e = torch.exp(row - m)
        out[r] = e / e.sum()
    return out.reshape(Xt.shape).movedim(-1, dim)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    out = torch.zeros_like(X)
    for b in range(B):
        for i in range(n_q):
            L = valid_lens[b] if valid_lens.dim() == 1 else valid_lens[b, i]
            L = int(L)
            out[b, i, :L + 1] = softmax(X[b, i, :L + 1], dim=-1, temperature=temperature)
    return out
