# style: d2l-like, flatten to 2-D rows, repeat_interleave the lengths, sequence mask
# bug: none
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum."""
    X = X / temperature
    X_max, _ = X.max(dim=dim, keepdim=True)
    X_max = X_max.masked_fill(X_max == float("-inf"), 0.0)
    X_exp = torch.exp(X - X_max)
    partition = X_exp.sum(dim=dim, keepdim=True)
    return X_exp / partition


def sequence_mask(X, valid_len, value=0.0):
    """Set the entries of each row of X at or past its valid length to value."""
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    X = X.clone()
    X[~mask] = value
    return X, mask


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X that ignores keys
    past a valid length.

    X: scores (B, n_q, n_k); valid_lens: None, (B,) or (B, n_q).
    """
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    rows, mask = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    weights = softmax(rows, dim=-1, temperature=temperature)
    # a row with no valid key would come out uniform: the mask zeros it
    weights = weights * mask.to(weights.dtype)
    return weights.reshape(shape)
