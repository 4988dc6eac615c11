# style: boolean indexing assignment of -inf, then softmax
# bug: masked_softmax | writes -inf into the caller's X in place (X[~keep] = -inf) instead of a copy: the weights are right but the input tensor is changed
# expect: masked_softmax | in place
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    m = X.amax(dim=dim, keepdim=True)
    m[~torch.isfinite(m)] = 0.0
    e = torch.exp(X - m)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1:
        lens = valid_lens.view(B, 1, 1)
    else:
        lens = valid_lens.view(B, n_q, 1)
    keep = (torch.arange(n_k, device=X.device).view(1, 1, n_k) < lens).expand(B, n_q, n_k)
    X[~keep] = float("-inf")
    w = softmax(X, temperature=temperature)
    w[~keep] = 0.0
    return w
