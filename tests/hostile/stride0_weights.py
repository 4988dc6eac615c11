"""Hostile ex03: the attention weights of the results declare shape (1, 32768, 32768) but hold one
number (masks built from that shape would take gigabytes), or are a plain tensor of the wrong shape.
It writes its result files itself, past the harness's own save (`_harness.child._save`)."""

import sys

_child, _format = sys.modules["_harness.child"], sys.modules["_harness.result_file"]
_real_save = _child._save
_calls = []


def _forged_save(obj, path):
    _calls.append(1)
    if len(_calls) % 2 == 0:
        return _real_save({"ok": {"attention_weights": torch.full((2, 3, 6), 0.5), "output": torch.zeros(2, 3, 7)}},
                          path)
    header = {"record": {"ok": {"attention_weights": {"$tensor": 0}, "output": {"$tensor": 1}}},
              "tensors": [{"dtype": "float32", "shape": [1, 32768, 32768], "offset": 0, "nbytes": 4},
                          {"dtype": "float32", "shape": [2, 3, 7], "offset": 4, "nbytes": 4 * 42}]}
    with open(path, "wb") as out:
        out.write(_format.pack(header, [bytes(4), bytes(4 * 42)]))


_child._save = _forged_save
