"""Hostile ex01: torch's softmax taken at import by a computed name (getattr(torch, "xamtfos"[::-1])),
before the grader hides it, and called with the current dispatch modes disabled (its backward written
out), so that no operator record sees it."""

import torch
from torch.utils._python_dispatch import _disable_current_modes

_hidden = getattr(torch, "xamtfos"[::-1])


class _Softmax(torch.autograd.Function):
    """torch's softmax forward, unseen; its backward written out, so that no softmax kernel runs in it."""

    @staticmethod
    def forward(ctx, X, dim):
        with _disable_current_modes():
            Y = _hidden(X, dim)
        ctx.save_for_backward(Y)
        ctx.dim = dim
        return Y

    @staticmethod
    def backward(ctx, grad):
        (Y,) = ctx.saved_tensors
        return Y * (grad - (grad * Y).sum(dim=ctx.dim, keepdim=True)), None


def softmax(X, dim=-1):
    return _Softmax.apply(X, dim)


def masked_softmax(X, valid_lens=None):
    if valid_lens is None:
        return softmax(X, dim=-1)
    B, n_q, n_k = X.shape
    lens = valid_lens[:, None].expand(B, n_q) if valid_lens.dim() == 1 else valid_lens
    mask = torch.arange(n_k)[None, None, :] < lens[:, :, None]
    weights = softmax(X.masked_fill(~mask, float("-inf")), dim=-1)
    return torch.nan_to_num(weights * mask, nan=0.0)
