# style: d2l-like, flatten rows and mask, reuse softmax then zero masked entries
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    X_max = torch.max(X, dim=dim, keepdim=True).values
    X_max = X_max.masked_fill(X_max == float("-inf"), 0.0)
    X_exp = torch.exp(X - X_max)
    partition = X_exp.sum(dim=dim, keepdim=True)
    return X_exp / partition


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1])
    mask = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens.to(X.device)[:, None]
    flat = flat.masked_fill(~mask, float("-inf"))
    weights = softmax(flat, dim=-1, temperature=temperature)
    # rows with no valid key came out as 0/0: make them zeros
    weights = torch.nan_to_num(weights, nan=0.0) * mask
    return weights.reshape(shape)
