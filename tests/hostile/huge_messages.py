"""Hostile ex03: every result carries 100 KB strings (within a result file's 1 MiB header, fifty times
the report's cap): an error's message, type, code line and traceback, or a text result (a report
holding them all would be megabytes). Handed to the harness's own writer."""

import sys

_child = sys.modules["_harness.child"]
_real_save = _child._save
_calls = []
_big = "x" * 100_000


def _forged_save(obj, path):
    _calls.append(1)
    if len(_calls) % 2:
        forged = {"error": {"kind": "exception", "type": _big, "message": _big, "traceback": _big,
                            "where": {"file": _big, "line": 1, "function": _big, "code": _big}}}
    else:
        forged = {"ok": {"output": _big, "attention_weights": _big, _big[:150]: _big}}
    return _real_save(forged, path)


_child._save = _forged_save
