# style: vectorised, mask multiplied in as floats
# bug: softmax | subtracts the single maximum of the whole tensor (X.max()) instead of each slice's maximum along dim, so a batch mixing rows near 1e4 with ordinary rows underflows those rows to 0/0
# expect: softmax | maximum of each slice
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    Numerically stable: subtract the maximum before exp.
    """
    X = X / temperature
    finite = X[torch.isfinite(X)]
    c = finite.max() if finite.numel() else X.new_zeros(())
    e = torch.exp(X - c)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length (the temperature as in softmax).

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.
    """
    if valid_lens is None:
        return softmax(X, -1, temperature)
    n_k = X.shape[-1]
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.view(-1, 1, 1)
    else:
        valid_lens = valid_lens.unsqueeze(2)
    mask = torch.arange(n_k, device=X.device).view(1, 1, n_k) < valid_lens
    w = softmax(X.masked_fill(~mask, float("-inf")), -1, temperature)
    return w.masked_fill(~mask, 0.0)
