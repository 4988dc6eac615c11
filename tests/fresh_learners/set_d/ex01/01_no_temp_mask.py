# style: amax, large negative fill, repeat_interleave
# bug: masked_softmax | the temperature is not applied when a mask is given (scores are not divided by it)
# expect: masked_softmax | temperature
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
    Z = X / temperature
    shifted = Z - torch.amax(Z, dim=dim, keepdim=True).nan_to_num(0.0, posinf=0.0, neginf=0.0)
    num = shifted.exp()
    den = num.sum(dim, keepdim=True)
    return num / den


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
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    flat = X.reshape(-1, shape[-1])
    mask = torch.arange(shape[-1], device=X.device)[None, :] < valid_lens[:, None]
    flat = flat.masked_fill(~mask, torch.finfo(flat.dtype).min)
    out = softmax(flat, dim=-1, temperature=1.0)
    out = torch.where(mask, out, torch.zeros_like(out))
    return out.reshape(shape)
