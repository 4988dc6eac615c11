# style: movedim for any axis, python loops over the rows of the masked softmax
"""Exercise 1 with loops over (example, query) rows."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along dim, computed on the last axis after moving dim there."""
    Z = (X / temperature).movedim(dim, -1)
    top = Z.detach().amax(dim=-1, keepdim=True)
    top = torch.nan_to_num(top, neginf=0.0)
    num = torch.exp(Z - top)
    den = num.sum(dim=-1, keepdim=True)
    out = num / den.clamp(min=torch.finfo(num.dtype).tiny)
    return out.movedim(-1, dim)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Each row softmaxed over its first L keys, zeros after."""
    if valid_lens is None:
        return softmax(X, temperature=temperature)
    B, n_q, n_k = X.shape
    rows = []
    for b in range(B):
        for q in range(n_q):
            L = int(valid_lens[b] if valid_lens.dim() == 1 else valid_lens[b, q])
            L = max(0, min(L, n_k))
            kept = softmax(X[b, q, :L], temperature=temperature) if L > 0 else X.new_zeros(0)
            rows.append(torch.cat([kept, X.new_zeros(n_k - L)]))
    return torch.stack(rows).reshape(B, n_q, n_k)
