# style: python loops over examples and queries, slicing the valid prefix
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    scaled = X / temperature
    biggest = torch.max(scaled, dim=dim, keepdim=True).values
    biggest = biggest.masked_fill(biggest == float("-inf"), 0.0)
    shifted = torch.exp(scaled - biggest)
    total = torch.sum(shifted, dim=dim, keepdim=True)
    return shifted / total


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    B, n_q, n_k = X.shape
    out = torch.zeros_like(X)
    for b in range(B):
        for i in range(n_q):
            if valid_lens.dim() == 1:
                n = int(valid_lens[b])
            else:
                n = int(valid_lens[b, i])
            n = max(0, min(n, n_k))
            if n > 0:
                out[b, i, :n] = softmax(X[b, i, :n], dim=-1, temperature=temperature)
    return out
