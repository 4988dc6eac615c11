# style: vectorised, broadcast mask and torch.where, keepdim reductions
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    softmax(x)_i = exp(x_i / T) / sum_j exp(x_j / T),  T = temperature
    Numerically stable (the maximum along `dim` is subtracted first);
    entries equal to -inf get weight exactly 0.
    """
    X = X / temperature
    m = X.amax(dim=dim, keepdim=True)
    # a slice that is all -inf has max -inf; shift by 0 there instead of NaN
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(X - m)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length (the temperature as in softmax).

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.
    Masked keys get weight exactly 0; a row whose valid length is 0 is all
    zeros (never NaN).
    """
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    n_k = X.shape[-1]
    if valid_lens.dim() == 1:
        lens = valid_lens[:, None, None]          # (B, 1, 1)
    else:
        lens = valid_lens[:, :, None]             # (B, n_q, 1)
    keys = torch.arange(n_k, device=X.device)
    mask = keys < lens                            # (B, 1 or n_q, n_k)
    scores = torch.where(mask, X / temperature, torch.tensor(float("-inf"), dtype=X.dtype, device=X.device))
    m = scores.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(scores - m)
    total = e.sum(dim=-1, keepdim=True)
    # rows with no valid key: e is all zeros, so divide by 1 instead of 0
    return e / torch.where(total > 0, total, torch.ones_like(total))
