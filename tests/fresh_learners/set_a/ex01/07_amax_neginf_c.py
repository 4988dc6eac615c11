# style: amax keepdim, broadcast mask, masked_fill with -inf
# bug: masked_softmax | writes -inf into X in place (masked_fill_) instead of into a copy
# expect: masked_softmax | modify
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1):
    """Softmax of X along `dim`, written from torch.exp and sum.

    softmax(x)_i = exp(x_i) / sum_j exp(x_j)

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
    row_max = X.amax(dim=dim, keepdim=True)
    # a slice that is entirely -inf has no finite maximum to subtract
    row_max = row_max.masked_fill(torch.isneginf(row_max), 0.0)
    expd = torch.exp(X - row_max)
    return expd / expd.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X that ignores keys past a valid length.

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.

    - Masked keys get weight exactly 0; a row whose valid length is 0 is all
      zeros (never NaN).
    - Same dtype and device as X, and X itself is not modified in place.
    Returns weights (B, n_q, n_k).
    """
    if valid_lens is None:
        return softmax(X, dim=-1)
    valid_lens = torch.as_tensor(valid_lens, device=X.device)
    if valid_lens.dim() == 1:
        limits = valid_lens[:, None, None]  # (B, 1, 1)
    else:
        limits = valid_lens[:, :, None]  # (B, n_q, 1)
    positions = torch.arange(X.shape[-1], device=X.device)  # (n_k,)
    keep = positions < limits  # (B, n_q or 1, n_k)
    scores = X.masked_fill_(~keep, float("-inf"))
    weights = softmax(scores, dim=-1)
    return weights.masked_fill(~keep, 0.0)
