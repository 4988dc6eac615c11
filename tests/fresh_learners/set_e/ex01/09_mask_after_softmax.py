# style: clone then explicit per-row loops to mask, helper for row zeroing
# bug: masked_softmax | takes the softmax over all keys first and then zeroes masked keys without renormalising
# expect: masked_softmax | before the softmax
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum."""
    scaled = X / temperature
    shift, _ = torch.max(scaled, dim=dim, keepdim=True)
    shift = shift.masked_fill(torch.isinf(shift), 0.0)
    numer = (scaled - shift).exp()
    denom = numer.sum(dim, keepdim=True)
    return numer / denom


def _length(valid_lens, b, i):
    if valid_lens.dim() == 1:
        return int(valid_lens[b])
    return int(valid_lens[b, i])


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax over the last axis of X that ignores keys past a valid length."""
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    scores = softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = scores.shape
    empty = torch.zeros(B, n_q, 1, dtype=torch.bool, device=X.device)
    for b in range(B):
        for i in range(n_q):
            L = _length(valid_lens, b, i)
            scores[b, i, max(L, 0):] = 0.0
            if L <= 0:
                empty[b, i, 0] = True
    return scores.masked_fill(empty, 0.0)
