# style: index assignment with a boolean mask, helper that builds the mask
# bug: masked_softmax | writes -inf into the caller's X in place (X[~mask] = -inf, no clone), so the input scores are modified
# expect: masked_softmax | X modified in place
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    - Numerically stable: subtract each slice's maximum along dim.
    - Entries equal to -inf get weight exactly 0.
    """
    X = X / temperature
    mx = torch.amax(X, dim=dim, keepdim=True)
    mx = mx.masked_fill(torch.isinf(mx), 0)
    expX = torch.exp(X - mx)
    return expX / torch.sum(expX, dim=dim, keepdim=True)


def _key_mask(valid_lens, n_q, n_k):
    """(B, n_q, n_k) boolean mask, True where key j < valid length."""
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.unsqueeze(1).expand(-1, n_q)
    j = torch.arange(n_k, device=valid_lens.device)
    return j.view(1, 1, -1) < valid_lens.unsqueeze(-1)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length (the temperature as in softmax).

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.

    - Masked keys get weight exactly 0; a row whose valid length is 0 is all
      zeros (never NaN).
    """
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    mask = _key_mask(valid_lens, n_q, n_k)
    X[~mask] = float("-inf")
    weights = softmax(X, dim=-1, temperature=temperature)
    weights[~mask] = 0.0
    return weights
