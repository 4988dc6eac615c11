# style: explicit loops over examples and queries, slicing the valid keys
# bug: none
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
    biggest = torch.max(X, dim, keepdim=True)[0]
    biggest = torch.where(torch.isfinite(biggest), biggest, torch.zeros_like(biggest))
    e = torch.exp(X - biggest)
    total = torch.sum(e, dim, keepdim=True)
    return e / total


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
    B, n_q, n_k = X.shape
    rows = []
    for b in range(B):
        out_rows = []
        for i in range(n_q):
            limit = valid_lens[b] if valid_lens.dim() == 1 else valid_lens[b, i]
            length = int((torch.arange(n_k, device=X.device) < limit).sum())
            row = X[b, i]
            if length == 0:
                out_rows.append(torch.zeros_like(row))
                continue
            kept = softmax(row[:length], dim=-1)
            pad = torch.zeros(n_k - length, dtype=X.dtype, device=X.device)
            out_rows.append(torch.cat([kept, pad]))
        rows.append(torch.stack(out_rows))
    return torch.stack(rows)
