# crashes only for 2-D valid_lens: reshaped as if 1-D
import torch


def softmax(X, dim=-1, temperature=1.0):
    X = X / temperature
    e = torch.exp(X - X.max(dim=dim, keepdim=True).values)
    return e / e.sum(dim=dim, keepdim=True)


def masked_softmax(X, valid_lens, temperature=1.0):
    if valid_lens is None:
        return softmax(X, -1, temperature)
    B, n_q, n_k = X.shape
    lens = valid_lens.reshape(B, 1, 1)
    mask = torch.arange(n_k).reshape(1, 1, n_k) < lens
    return softmax(X.masked_fill(~mask, -1e6), -1, temperature)
