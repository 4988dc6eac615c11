# style: short vectorised, Tensor methods chained
# bug: softmax | the max and the sum are taken along a literal -1 instead of the dim argument, so softmax(X, dim=0) (any dim but the last) is wrong
# expect: softmax | along dim argument
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    shift = X.max(-1, keepdim=True).values.clamp_min(torch.finfo(X.dtype).min)
    ex = (X - shift).exp()
    return ex / ex.sum(-1, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    lens = valid_lens[:, None, None] if valid_lens.dim() == 1 else valid_lens[..., None]
    valid = torch.arange(X.size(-1), device=X.device) < lens
    w = softmax(X.masked_fill(~valid, float("-inf")), temperature=temperature)
    return torch.where(valid, w, torch.zeros_like(w))
