"""Hostile ex03: the attention weights of the results are a stride-0 (1, 32768, 32768) view of one
number (masks built from that shape would take gigabytes), or a plain tensor of the wrong shape."""

_real_save = torch.save
_calls = []


def _forged_save(obj, f, *args, **kwargs):
    _calls.append(1)
    if len(_calls) % 2:
        weights = torch.full((1, 1, 1), 0.5).expand(1, 32768, 32768)
    else:
        weights = torch.full((2, 3, 6), 0.5)
    return _real_save({"ok": {"attention_weights": weights, "output": torch.zeros(2, 3, 7)}}, f, *args, **kwargs)


torch.save = _forged_save
