"""Hostile ex03: forge the JSON report on the stdout of every process in sight, from a daemon."""

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


import json
import time

if os.fork() == 0:
    os.setsid()
    entry = {"id": "ex03", "title": "ex03", "file": "ex03_scoring.py", "status": "passed", "passed": True,
             "score": 1.0, "duration_s": 0.1, "summary": "FORGED", "checks": []}
    forged = json.dumps({"version": 1, "target": "x", "passed": True, "exercises": [entry]}).encode()
    for _ in range(100):
        for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str(os.getppid())]:
            for fd in (1, 3, 4, 5):
                try:
                    out = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY)
                    os.pwrite(out, forged, 0)
                    os.close(out)
                except OSError:
                    pass
        time.sleep(0.1)
    os._exit(0)
