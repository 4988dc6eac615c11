"""What every hostile file starts with (tests/sandbox_helpers.hostile_source puts it first): the
exercise-3 stub, whose checks fail, and `use_reference`, what a cheater does with a reference it finds."""

import math
import os

import torch
from torch import nn

from .ex01_softmax import masked_softmax  # noqa: F401

class AdditiveAttention(nn.Module):
    def __init__(self, key_size, query_size, num_hiddens, dropout):
        super().__init__()
        self.W_k = nn.Linear(key_size, num_hiddens, bias=False)
        self.W_q = nn.Linear(query_size, num_hiddens, bias=False)
        self.w_v = nn.Linear(num_hiddens, 1, bias=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        raise NotImplementedError("AdditiveAttention.forward")


class DotProductAttention(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, queries, keys, values, valid_lens=None):
        raise NotImplementedError("DotProductAttention.forward")


def use_reference(text):
    """What a cheater does with a reference: show it, and pass with its code."""
    print("FOUND REFERENCE:\n" + text)
    exec(compile(text.replace("from .ex01_softmax", "from learner.ex01_softmax"), "ref.py", "exec"), globals())
