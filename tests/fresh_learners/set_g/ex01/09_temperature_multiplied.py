# style: expand lengths, large negative fill
# bug: softmax | multiplies X by the temperature instead of dividing
# expect: softmax | divide by temperature
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X * temperature
    shifted = X - torch.max(X, dim=dim, keepdim=True).values.nan_to_num(neginf=0.0, posinf=0.0)
    numer = shifted.exp()
    return numer / numer.sum(dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1:
        valid_lens = valid_lens.unsqueeze(1).expand(B, n_q)
    keys = torch.arange(n_k, device=X.device).view(1, 1, n_k)
    mask = keys < valid_lens.unsqueeze(-1)
    filled = torch.where(mask, X, torch.full_like(X, -1e6 if X.dtype != torch.float16 else -6e4))
    return softmax(filled, dim=-1, temperature=temperature) * mask.to(X.dtype)
