# style: amax + torch.where with -inf, guarded max and denominator
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    softmax(x)_i = exp(x_i / T) / sum_j exp(x_j / T),  T = temperature

    - Divide X by the temperature first (X = X / temperature), then as below.
      The default temperature is 1.0 in the published exercise. In a class
      your exercise variant gives you your own default (the Practice page
      and `python -m grader --variant N` show it): write it as the default
      here and in masked_softmax; the grader calls both without it.

    - Do not call torch.softmax, F.softmax or Tensor.softmax.
    - Numerically stable: logits of 1e4 must not overflow (exp(1e4) = inf).
      Subtracting the maximum along `dim` changes nothing mathematically.
      Each slice along `dim` needs its own maximum: one batch may mix rows
      near 1e4 with ordinary rows ([[1e4, 1e4 + 1], [0, 1]]).
    - Accurate to float32's tolerance (relative 1e-4): a formula that rounds
      near 1e4, such as exp(X - logsumexp(X)), is off by about 1e-3 there and
      does not pass; exp(X - max) / sum is exact there.
    - Entries equal to -inf get weight exactly 0.
    Returns a tensor of X's shape, dtype and device.
    """
    scaled = X / temperature
    shift = torch.amax(scaled, dim=dim, keepdim=True)
    numer = torch.exp(scaled - shift)
    denom = torch.sum(numer, dim=dim, keepdim=True)
    return numer / denom


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length (the temperature as in softmax).

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.

    - Masked keys get weight exactly 0; a row whose valid length is 0 is all
      zeros (never NaN).
    - Same dtype and device as X, and X itself is not modified in place.
    Returns weights (B, n_q, n_k).
    """
    scaled = X / temperature
    if valid_lens is None:
        valid = torch.ones_like(scaled, dtype=torch.bool)
    else:
        positions = torch.arange(X.shape[-1], device=X.device)
        if valid_lens.dim() == 1:
            valid = positions.view(1, 1, -1) < valid_lens.view(-1, 1, 1)
        else:
            valid = positions.view(1, 1, -1) < valid_lens.unsqueeze(-1)
        valid = valid.expand_as(scaled)
    neg_inf = torch.full_like(scaled, float("-inf"))
    scores = torch.where(valid, scaled, neg_inf)
    row_max = torch.amax(scores, dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    numer = torch.where(valid, torch.exp(scores - row_max), torch.zeros_like(scaled))
    denom = numer.sum(dim=-1, keepdim=True)
    denom = torch.where(denom > 0, denom, torch.ones_like(denom))
    return numer / denom
