"""Exercise 1 as a learner writes it, with one honest slip: the sum is not kept away from 0, so a fully masked row
(valid length 0) gives 0/0 = NaN weights. Its report carries NaN (the weights diff's `got_value`): the class
stores and shows it (tests/test_classroom_non_finite.py, bench/non_finite_verdict.py)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, shifted by each slice's maximum."""
    X = X / temperature
    X_max = X.amax(dim=dim, keepdim=True)
    X_max = torch.where(torch.isinf(X_max), torch.zeros_like(X_max), X_max)  # an all -inf slice: no shift
    X_exp = torch.exp(X - X_max)
    return X_exp / X_exp.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax over the last axis, keys at or past valid_lens masked out."""
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    lens = valid_lens if valid_lens.dim() == 2 else valid_lens[:, None].expand(B, n_q)
    keep = torch.arange(n_k, device=X.device)[None, None, :] < lens[:, :, None]
    return softmax(X.masked_fill(~keep, float("-inf")), dim=-1, temperature=temperature)
