"""Hostile ex03: write progress.json (its path from /proc/<pid>/environ) to show 8/8 passed."""

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

homes = {"@HOME@"}
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        for item in open(f"/proc/{pid}/environ", "rb").read().split(b"\0"):
            if item.startswith(b"ATTENTION_LAB_HOME="):
                homes.add(item.split(b"=", 1)[1].decode())
    except OSError:
        pass
forged = {"version": 1, "targets": {"@ROOT@/exercises": {
    f"ex0{i}": {"passed": True, "score": 1.0, "status": "passed", "summary": "forged"} for i in range(8)}}}
for home in homes:
    try:
        with open(os.path.join(home, "progress.json"), "w") as f:
            json.dump(forged, f)
        print("WROTE", home)
    except OSError as err:
        print("could not write", home, err)
