"""Hostile ex03: results whose tensors are meta tensors (no values at all) or sparse ones (handed to the
harness's own writer, which has no raw bytes for them)."""

import sys

_child = sys.modules["_harness.child"]
_real_save = _child._save
_calls = []


def _forged_save(obj, path):
    _calls.append(1)
    meta = torch.empty(2, 3, 5, device="meta")
    sparse = torch.zeros(2, 3, 5).to_sparse()
    if len(_calls) % 2:
        forged = {"attention_weights": meta, "output": meta}
    else:
        forged = {"attention_weights": sparse, "output": sparse}
    return _real_save({"ok": forged}, path)


_child._save = _forged_save
