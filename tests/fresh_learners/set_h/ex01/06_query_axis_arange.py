# style: broadcasting with unpacked sizes
# bug: masked_softmax | builds the key positions with arange over X.shape[1] (the query axis) instead of the key axis, which breaks whenever n_q != n_k
# expect: masked_softmax | key axis n_k
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    mx = X.amax(dim=dim, keepdim=True)
    mx = mx.masked_fill(~torch.isfinite(mx), 0)
    ex = (X - mx).exp()
    return ex / ex.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, -1, temperature)
    lens = valid_lens.to(X.device)
    lens = lens.view(-1, 1, 1) if lens.dim() == 1 else lens.unsqueeze(-1)
    positions = torch.arange(X.shape[1], device=X.device).view(1, 1, -1)
    keep = positions < lens
    masked = X.masked_fill(~keep, float("-inf"))
    w = softmax(masked, -1, temperature)
    return w.masked_fill(~keep, 0.0)
