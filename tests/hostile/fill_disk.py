"""Hostile ex03: write 128 MiB to every folder in reach (files of 4 MiB), and report how much stuck."""

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


written = {}
for folder in ("/tmp", "/", "/dev", "/dev/shm", "/job", "/job/results", "/job/out", os.getcwd()):
    total = 0
    try:
        for i in range(32):
            with open(os.path.join(folder, f"fill{i}"), "wb") as f:
                f.write(b"x" * 2**22)
            total += 4
    except OSError:
        pass
    written[folder] = total
for folder in written:  # make room to say how much it was
    for i in range(32):
        try:
            os.remove(os.path.join(folder, f"fill{i}"))
        except OSError:
            pass
print("WRITTEN_MB", sum(written.values()), written, flush=True)
