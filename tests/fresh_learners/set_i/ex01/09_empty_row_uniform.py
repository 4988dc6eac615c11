# style: d2l-like sequence mask with a large negative fill value
# bug: masked_softmax | masked keys are filled with -1e6 and nothing zeroes a row whose valid length is 0, so that row comes out uniform (1/n_k) instead of all zeros
# expect: masked_softmax | valid length 0
"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3,
"Scoring functions, masking and the sqrt(d_k) scale")."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, written from torch.exp and sum.

    softmax(x)_i = exp(x_i / T) / sum_j exp(x_j / T),  T = temperature
    """
    X = X / temperature
    X_max = X.max(dim=dim, keepdim=True)[0]
    X_max = torch.where(X_max == float("-inf"), torch.zeros_like(X_max), X_max)
    X_exp = (X - X_max).exp()
    return X_exp / X_exp.sum(dim=dim, keepdim=True)


def sequence_mask(X, valid_len, value=0):
    maxlen = X.size(1)
    mask = torch.arange(maxlen, device=X.device)[None, :] < valid_len[:, None]
    return X.masked_fill(~mask, value)


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
    X = sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return softmax(X.reshape(shape), dim=-1, temperature=temperature)
