"""Hostile ex03: every result carries 4 MB strings: an error's message, type, code line and traceback,
or a text result (a report holding them all would be tens of MB)."""

_real_save = torch.save
_calls = []
_big = "x" * (4 * 2**20)


def _forged_save(obj, f, *args, **kwargs):
    _calls.append(1)
    if len(_calls) % 2:
        forged = {"error": {"kind": "exception", "type": _big, "message": _big, "traceback": _big,
                            "where": {"file": _big, "line": 1, "function": _big, "code": _big}}}
    else:
        forged = {"ok": {"output": _big, "attention_weights": _big, _big[:150]: _big}}
    return _real_save(forged, f, *args, **kwargs)


torch.save = _forged_save
