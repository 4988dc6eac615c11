"""Hostile ex03: results whose tensors are meta tensors (no values at all) or sparse ones."""

_real_save = torch.save
_calls = []


def _forged_save(obj, f, *args, **kwargs):
    _calls.append(1)
    meta = torch.empty(2, 3, 5, device="meta")
    sparse = torch.zeros(2, 3, 5).to_sparse()
    if len(_calls) % 2:
        forged = {"attention_weights": meta, "output": meta}
    else:
        forged = {"attention_weights": sparse, "output": sparse}
    return _real_save({"ok": forged}, f, *args, **kwargs)


torch.save = _forged_save
