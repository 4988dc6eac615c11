# style: max(dim).values then unsqueeze(-1) instead of keepdim
# bug: softmax | restores the reduced axis with unsqueeze(-1) whatever dim is: raises a broadcast error for dim other than the last on non-square inputs (e.g. X (3, 4), dim=0; wrong values when square); fine for dim=-1
# expect: softmax | keepdim
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    m = X.max(dim=dim).values.unsqueeze(-1)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    e = torch.exp(X - m)
    return e / e.sum(dim=dim).unsqueeze(-1)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.unsqueeze(1).expand(B, n_q)
    keep = torch.arange(n_k, device=X.device) < valid_lens.unsqueeze(-1)
    w = softmax(X.masked_fill(~keep, float("-inf")), temperature=temperature)
    return w.masked_fill(~keep, 0.0)
