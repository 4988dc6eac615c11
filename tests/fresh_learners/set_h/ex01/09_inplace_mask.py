# style: boolean indexing assignment
# bug: masked_softmax | writes -inf into the caller's X in place (X[~mask] = -inf) instead of masking a copy
# expect: masked_softmax | X modified in place
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    Z = X / temperature
    top = Z.max(dim=dim, keepdim=True).values
    top[torch.isinf(top)] = 0.0
    E = torch.exp(Z - top)
    return E / E.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.unsqueeze(1).expand(B, n_q)
    mask = torch.arange(n_k, device=X.device).expand(B, n_q, n_k) < valid_lens.unsqueeze(-1)
    X[~mask] = float("-inf")
    W = softmax(X, dim=-1, temperature=temperature)
    W[~mask] = 0.0
    return W
