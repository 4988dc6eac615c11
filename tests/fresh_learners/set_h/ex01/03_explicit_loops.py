# style: explicit Python loops over batch and query rows for the mask
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    scaled = X / temperature
    biggest = scaled.max(dim=dim, keepdim=True)[0]
    biggest = torch.nan_to_num(biggest, neginf=0.0, posinf=0.0)
    shifted = torch.exp(scaled - biggest)
    return shifted / torch.sum(shifted, dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    B, n_q, n_k = X.shape
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    out = torch.zeros_like(X)
    for b in range(B):
        for i in range(n_q):
            if valid_lens.dim() == 1:
                length = int(valid_lens[b])
            else:
                length = int(valid_lens[b, i])
            length = max(0, min(length, n_k))
            if length > 0:
                out[b, i, :length] = softmax(X[b, i, :length], dim=-1, temperature=temperature)
    return out
