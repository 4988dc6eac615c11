# style: explicit python loops to build the mask, torch.where, max().values
# bug: softmax | casts X to float32 first, so float64 (or half) input comes back as float32
# expect: softmax | dtype
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
    X = X.float()
    biggest, _ = X.max(dim=dim)
    biggest = torch.nan_to_num(biggest, neginf=0.0).unsqueeze(dim)
    numerator = torch.exp(X - biggest)
    denominator = torch.sum(numerator, dim=dim).unsqueeze(dim)
    return numerator / denominator


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
        return softmax(X, -1)
    batch, n_q, n_k = X.shape
    mask = torch.zeros(batch, n_q, n_k, dtype=torch.bool, device=X.device)
    for b in range(batch):
        for i in range(n_q):
            if valid_lens.dim() == 1:
                length = valid_lens[b].item()
            else:
                length = valid_lens[b, i].item()
            for j in range(n_k):
                if j < length:
                    mask[b, i, j] = True
    neg_inf = torch.tensor(float("-inf"), dtype=X.dtype, device=X.device)
    weights = softmax(torch.where(mask, X, neg_inf), -1)
    return torch.where(mask, weights, torch.zeros_like(weights))
