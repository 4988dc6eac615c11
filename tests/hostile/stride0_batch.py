"""Hostile ex03: every result is a 1.6 KB file whose tensors are stride-0 views of shape (2**62, 1),
saved past the harness's copy (a property check that loops over the batch would never end)."""

_real_save = torch.save


def _forged_save(obj, f, *args, **kwargs):
    view = torch.zeros(1, 1).expand(2**62, 1)
    forged = {"full": view, "item0": view, "output": view, "attention_weights": view}
    return _real_save({"ok": forged}, f, *args, **kwargs)


torch.save = _forged_save
