"""Hostile ex03: 4 forked children x 1.5 GiB each, and 2 GB written to /tmp."""

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


import time

children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = torch.ones(3 * 2**28 // 2, dtype=torch.float32)  # 1.5 GiB touched
            block += 1
            time.sleep(20)
        finally:
            os._exit(0)
    children.append(pid)
time.sleep(3)  # let the children take their memory
try:
    for i in range(256):  # 2 GB in files of 8 MB (each under the per-file cap)
        with open(f"/tmp/fill{i}", "wb") as f:
            for _ in range(8):
                f.write(b"x" * 2**20)
except OSError as err:
    for i in range(256):  # make room to say so
        if os.path.exists(f"/tmp/fill{i}"):
            os.remove(f"/tmp/fill{i}")
    print("disk write stopped:", err, flush=True)
for pid in children:
    os.waitpid(pid, 0)
