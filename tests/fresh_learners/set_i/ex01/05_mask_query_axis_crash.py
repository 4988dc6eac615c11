# style: vectorised, boolean mask built from the score shape, masked_fill
# bug: masked_softmax | the key positions come from torch.arange(X.shape[1]) (the query axis n_q) instead of X.shape[-1] (n_k), so the mask does not broadcast when n_q != n_k
# expect: masked_softmax | key axis n_k
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    softmax(x)_i = exp(x_i / T) / sum_j exp(x_j / T),  T = temperature
    """
    z = X / temperature
    z_max = z.amax(dim=dim, keepdim=True)
    z_max = z_max.nan_to_num(neginf=0.0)
    num = (z - z_max).exp()
    return num / num.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length (the temperature as in softmax).

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.
    """
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.unsqueeze(-1)          # (B, 1)
    positions = torch.arange(X.shape[1], device=X.device)
    keep = positions[None, None, :] < valid_lens.unsqueeze(-1)
    weights = softmax(X.masked_fill(~keep, float("-inf")), temperature=temperature)
    return weights.masked_fill(~keep, 0.0)
