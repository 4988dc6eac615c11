"""Hostile ex03: results of the wrong structure: a dict and a list where tensors are expected, and a
record that is a list (written by the harness's own writer, handed the forged record)."""

import sys

_child = sys.modules["_harness.child"]
_real_save = _child._save
_calls = []


def _forged_save(obj, path):
    _calls.append(1)
    if len(_calls) % 2:
        forged = {"ok": {"output": {"weights": torch.zeros(2, 3, 7)}, "attention_weights": [torch.zeros(2, 3, 5)]}}
    else:
        forged = [torch.zeros(2, 3, 7)]
    return _real_save(forged, path)


_child._save = _forged_save
