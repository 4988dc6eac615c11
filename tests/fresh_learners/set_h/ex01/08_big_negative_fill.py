# style: d2l-style fill with a large negative number
# bug: masked_softmax | fills masked scores with -1e6 instead of excluding them, so a row with valid length 0 comes out uniform instead of all zeros
# expect: masked_softmax | valid length 0
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    X_max = X.max(dim=dim, keepdim=True).values
    X_max = torch.where(torch.isneginf(X_max), torch.zeros_like(X_max), X_max)
    X_exp = torch.exp(X - X_max)
    return X_exp / X_exp.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = X.reshape(-1, shape[-1])
    mask = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    X = X.masked_fill(~mask, -1e6)
    return softmax(X.reshape(shape), dim=-1, temperature=temperature)
