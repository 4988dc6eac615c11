"""Exercise 1: a numerically stable softmax and the masked softmax (chapter 3)."""

import torch


def softmax(X, dim=-1, temperature=1.0):
    """Softmax of X / temperature along `dim`, from exp and sum, safe for huge logits (each slice shifted by its
    own max) and -inf. The default temperature is 1.0 in the published exercise; a class variant gives each
    learner their own (course/common/exercise_variants.py), written here and in masked_softmax."""
    X = X / temperature  # a new tensor: every logit divided by the temperature
    X_max = X.detach().amax(dim=dim, keepdim=True)
    # A slice that is all -inf has no finite maximum: shift it by 0 instead.
    X_max = torch.where(torch.isfinite(X_max), X_max, torch.zeros_like(X_max))
    X_exp = torch.exp(X - X_max)  # largest entry becomes exp(0) = 1
    total = X_exp.sum(dim=dim, keepdim=True)
    # Only an all -inf slice has total 0; it gets all-zero weights, not 0/0.
    return X_exp / total.clamp_min(torch.finfo(X_exp.dtype).tiny)


def _valid_mask(X, valid_lens):
    """Boolean mask (B, n_q, n_k), True where key index < valid length."""
    if X.dim() != 3:
        raise ValueError(f"X must have shape (B, n_q, n_k); got {tuple(X.shape)}")
    B, n_q, n_k = X.shape
    if valid_lens.dim() == 1 and valid_lens.shape[0] == B:
        lens = valid_lens[:, None].expand(B, n_q)  # (B, n_q)
    elif valid_lens.dim() == 2 and tuple(valid_lens.shape) == (B, n_q):
        lens = valid_lens  # (B, n_q)
    else:
        raise ValueError(
            f"valid_lens must have shape (B,) = ({B},) or (B, n_q) = ({B}, {n_q}); "
            f"got {tuple(valid_lens.shape)}"
        )
    key_index = torch.arange(n_k, device=X.device)  # (n_k,)
    return key_index[None, None, :] < lens[:, :, None].to(X.device)  # (B, n_q, n_k)


def masked_softmax(X, valid_lens, temperature=1.0):
    """Softmax of X / temperature over the last axis of X (B, n_q, n_k), keys past valid_lens get 0."""
    if valid_lens is None:
        return softmax(X, dim=-1, temperature=temperature)
    mask = _valid_mask(X, valid_lens)  # (B, n_q, n_k)
    scores = X.masked_fill(~mask, float("-inf"))  # a copy: X is left as it was
    return softmax(scores, dim=-1, temperature=temperature)  # (B, n_q, n_k); empty rows are all 0
