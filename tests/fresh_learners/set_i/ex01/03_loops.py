# style: explicit loops over batch and query rows, small helper per row
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    Subtract the maximum of each slice along dim before exp, so that large
    logits do not overflow.
    """
    scaled = X / temperature
    biggest = torch.max(scaled, dim=dim, keepdim=True).values
    biggest = torch.nan_to_num(biggest, neginf=0.0)
    numerator = torch.exp(scaled - biggest)
    denominator = torch.sum(numerator, dim=dim, keepdim=True)
    return numerator / denominator


def _row_softmax(row, length, temperature):
    out = torch.zeros_like(row)
    length = int(length)
    if length > 0:
        out[:length] = softmax(row[:length], dim=0, temperature=temperature)
    return out


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length (the temperature as in softmax).

    X: scores (B, n_q, n_k).
    valid_lens: None (no mask), (B,) one length per example, or (B, n_q) one
    length per query. Key j of a row is valid when j < its valid length.
    """
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    B, n_q, n_k = X.shape
    rows = []
    for b in range(B):
        per_query = []
        for i in range(n_q):
            length = valid_lens[b] if valid_lens.dim() == 1 else valid_lens[b, i]
            per_query.append(_row_softmax(X[b, i], min(int(length), n_k), temperature))
        rows.append(torch.stack(per_query))
    return torch.stack(rows)
