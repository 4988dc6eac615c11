# style: vectorised, written for the last axis
# bug: softmax | takes the max and the sum over a literal -1 instead of the dim argument
# expect: softmax | dim argument
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    m = X.max(-1, keepdim=True).values
    m = torch.where(m == float("-inf"), torch.zeros_like(m), m)
    e = torch.exp(X - m)
    return e / e.sum(-1, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    n_k = X.shape[-1]
    if valid_lens.dim() == 1:
        lens = valid_lens.reshape(-1, 1, 1)
    else:
        lens = valid_lens.unsqueeze(-1)
    mask = torch.arange(n_k, device=X.device) < lens
    w = softmax(X.masked_fill(~mask, float("-inf")), dim=-1, temperature=temperature)
    return torch.where(mask, w, torch.zeros_like(w))
