"""Hostile ex03: rewrite the results after the child exited, from a background process."""

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


import glob
import time

learner = os.getpid()
if os.fork() == 0:
    os.setsid()
    while os.getppid() == learner:  # wait until the learner's process has exited
        time.sleep(0.001)
    forged = {"error": {"kind": "exception", "type": "Forged", "message": "FORGED RESULT",
                        "where": None, "traceback": ""}}
    for _ in range(200):
        time.sleep(0.05)
        for path in glob.glob("results/*.pt") + glob.glob("/job/results/*.pt"):
            try:
                torch.save(forged, path)
            except Exception:
                pass
        for path in ("status.json", "/job/status.json"):
            try:
                open(path, "w").write('{"timed_out": false, "exit_code": 0, "elapsed_s": 0.1}')
            except OSError:
                pass
    os._exit(0)
