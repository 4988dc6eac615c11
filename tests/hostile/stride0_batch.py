"""Hostile ex03: every result is a small file whose tensors declare shape (2**62, 1) but hold the 4
bytes of one number (what a stride-0 view is: a property check that loops over the batch would never
end). It writes its result files itself, past the harness's own save (`_harness.child._save`)."""

import sys

_format = sys.modules["_harness.result_file"]


def _forged_save(obj, path):
    names = ("full", "item0", "output", "attention_weights")
    header = {"record": {"ok": {name: {"$tensor": i} for i, name in enumerate(names)}},
              "tensors": [{"dtype": "float32", "shape": [2**62, 1], "offset": 4 * i, "nbytes": 4}
                          for i in range(len(names))]}
    with open(path, "wb") as out:
        out.write(_format.pack(header, [bytes(4)] * len(names)))


sys.modules["_harness.child"]._save = _forged_save
