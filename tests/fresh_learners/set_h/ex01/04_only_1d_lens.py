# style: d2l-like repeat_interleave, one branch for the lengths
# bug: masked_softmax | always repeat_interleaves valid_lens as if it were (B,), so per-query (B, n_q) lengths crash in the reshape
# expect: masked_softmax | valid_lens 2-D
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    X_max = X.max(dim=dim, keepdim=True).values
    X_max = torch.where(torch.isinf(X_max), torch.zeros_like(X_max), X_max)
    e = torch.exp(X - X_max)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    B, n_q, n_k = X.shape
    lens = torch.repeat_interleave(valid_lens, n_q).reshape(B, n_q, 1)
    mask = torch.arange(n_k, device=X.device) < lens
    scores = X.masked_fill(~mask, float("-inf"))
    w = softmax(scores, dim=-1, temperature=temperature)
    return torch.where(mask, w, torch.zeros_like(w))
