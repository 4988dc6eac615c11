# style: vectorised, lengths spread with repeat_interleave
# bug: masked_softmax | spreads valid_lens with repeat_interleave(n_q) and reshapes to (B, n_q); raises RuntimeError for per-query valid_lens (B, n_q) with n_q > 1, works for (B,)
# expect: masked_softmax | per-query lengths
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
    B, n_q = X.shape[0], X.shape[1]
    lens = valid_lens.repeat_interleave(n_q).reshape(B, n_q, 1)
    keep = torch.arange(n_k, device=X.device)[None, None, :] < lens
    Xm = X.masked_fill(~keep, float("-inf"))
    w = softmax(Xm, dim=-1, temperature=temperature)
    return torch.where(keep, w, torch.zeros_like(w))
