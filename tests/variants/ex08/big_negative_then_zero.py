# style: -1e9 fill (d2l style), then the hidden keys zeroed after the softmax; bmm, float mask arithmetic
"""Exercise 8 with a large negative fill and an explicit zeroing of hidden keys."""

import math

import torch
from torch import nn

from .ex01_softmax import softmax


def sliding_window_mask(num_queries, num_keys, half_width, causal=False, dilation=1):
    if half_width < 0:
        raise ValueError("negative half_width")
    offsets = torch.arange(num_keys)[None, :] - torch.arange(num_queries)[:, None]  # j - i
    upper = 0 if causal else half_width
    reach = (offsets >= -half_width * dilation) & (offsets <= upper * dilation)
    return reach & (offsets.remainder(dilation) == 0)


def graph_mask(adjacency, self_loops=True):
    if adjacency.shape[-1] != adjacency.shape[-2]:
        raise ValueError("not square")
    mask = adjacency.to(torch.float32).abs() > 0
    if self_loops:
        mask = mask | torch.diag(torch.ones(adjacency.shape[-1], dtype=torch.bool))
    return mask


def softmax_with_mask(X, mask):
    if mask is None:
        return softmax(X)
    keep = mask.to(X.dtype)
    weights = softmax(X.masked_fill(mask == 0, -1e9))
    return weights * keep


class MaskedDotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, mask=None):
        scores = torch.bmm(queries, keys.permute(0, 2, 1)) / math.sqrt(keys.shape[-1])
        self.attention_weights = softmax_with_mask(scores, mask)
        return torch.bmm(self.dropout(self.attention_weights), values)
