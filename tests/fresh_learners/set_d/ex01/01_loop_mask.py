# style: mask built with a loop over examples, exp/sum renormalised by hand
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
    biggest, _ = torch.max(scaled, dim=dim, keepdim=True)
    biggest = biggest.masked_fill(biggest == float("-inf"), 0.0)
    exps = torch.exp(scaled - biggest)
    totals = torch.sum(exps, dim=dim, keepdim=True)
    return exps / totals


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
    B, n_q, n_k = X.shape
    mask = torch.ones(B, n_q, n_k, dtype=torch.bool, device=X.device)
    if valid_lens is not None:
        for b in range(B):
            if valid_lens.dim() == 1:
                mask[b, :, int(valid_lens[b]):] = False
            else:
                for i in range(n_q):
                    mask[b, i, int(valid_lens[b, i]):] = False
    scaled = X / temperature
    masked = torch.where(mask, scaled, torch.full_like(scaled, float("-inf")))
    top = masked.max(dim=-1, keepdim=True).values
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    exps = torch.exp(masked - top)
    totals = exps.sum(dim=-1, keepdim=True)
    totals = torch.where(totals == 0, torch.ones_like(totals), totals)
    return exps / totals
