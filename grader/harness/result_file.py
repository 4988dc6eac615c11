"""The files a job returns: what a result file holds, how the harness writes one, which files may leave a job.

A result file holds no code and nothing to interpret: an 8-byte MAGIC, the header's length (8 bytes,
little-endian), the header (UTF-8 JSON) and then the raw bytes of every tensor, little-endian and
C-contiguous, one after another. The header is

    {"record": value, "tensors": [{"dtype": "float32", "shape": [2, 3], "offset": 0, "nbytes": 24}, ...]}

where `value` is the record as JSON, each tensor in it standing as {"$tensor": <index into tensors>}
(offsets count from the first byte after the header), and a tensor that has no raw form (a meta,
sparse or quantized tensor, one of another dtype) as {"$unwritable": "<what it is>"}. The harness
writes it in the sandbox (`write`); the grader reads it as hostile bytes (grader/untrusted_records.py),
with the bounds named here.

`returned(dir_fd, ...)` is the one rule for which files of a job's results folder are taken: the
strict server applies it before it copies anything out of a box (harness/strict.py), the grader before
it reads anything (grader/sandbox.py).

Standard library only at import (torch is imported by `write`): the grader imports this module too.
"""

import json
import os
import re
import stat

MAGIC = b"ALRES1\r\n"
RESULT_SUFFIX = ".result"
RESULT_NAME = re.compile(r"(import|0|[1-9][0-9]{0,5})" + re.escape(RESULT_SUFFIX))  # import.result, <call>.result
DTYPES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "bool": 1, "uint8": 1, "int8": 1,
          "int16": 2, "int32": 4, "int64": 8}  # name -> bytes per element
MAX_HEADER = 2**20  # bytes of JSON header: names, numbers and text, never tensor data
MAX_DEPTH = 16  # nesting of the record (a record is 2 levels, an error's `where` 3)
MAX_TENSORS = 4096
MAX_CONTAINERS = 4 * MAX_TENSORS + 64  # "{" and "[" bytes in a header (3 per tensor, a few for the record)
MAX_DIMS = 8
MAX_SIZE = 2**31 - 1  # of any one dimension, an empty tensor's too
MAX_FILES = 1024  # entries a results folder may hold (a check runs far fewer calls)


def encode(record):
    """A record -> (header dict, [bytes of each tensor]); tensors become {"$tensor": i} (see the module doc)."""
    import torch

    tensors, blobs = [], []
    offset = [0]

    def walk(value, depth):
        if isinstance(value, torch.Tensor):
            what = _unwritable(value, torch)
            if what:
                return {"$unwritable": what}
            data = value.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
            tensors.append({"dtype": str(value.dtype).replace("torch.", ""), "shape": list(value.shape),
                            "offset": offset[0], "nbytes": len(data)})
            blobs.append(data)
            offset[0] += len(data)
            return {"$tensor": len(tensors) - 1}
        if depth >= MAX_DEPTH and isinstance(value, (dict, list, tuple)):
            return f"<{type(value).__name__}>"
        if isinstance(value, dict):
            return {str(k): walk(v, depth + 1) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v, depth + 1) for v in value]
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        return f"<{type(value).__name__}>"

    return {"record": walk(record, 1), "tensors": tensors}, blobs


def _unwritable(t, torch):
    """What a tensor is when it has no raw form here ('meta', 'sparse_coo', 'complex64', ...), else ''."""
    if t.device.type != "cpu":
        return t.device.type
    if t.layout != torch.strided:
        return str(t.layout).replace("torch.", "")
    if t.is_quantized or getattr(t, "is_nested", False):
        return "quantized" if t.is_quantized else "nested"
    name = str(t.dtype).replace("torch.", "")
    return "" if name in DTYPES else name


def pack(header, blobs):
    """The bytes of a result file for a header and its tensors' bytes."""
    text = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode()
    return b"".join([MAGIC, len(text).to_bytes(8, "little"), text, *blobs])


def write(record, path):
    """Write a record as a result file: to a temporary name, then renamed (no half-written results)."""
    data = pack(*encode(record))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def returned(dir_fd, max_bytes, max_files=MAX_FILES):
    """Which result files of a results folder (an open descriptor) may leave the job
    -> ([(name, size)], None), or ([], refusal) where refusal is {"reason", "name", "size", "links", "limit"}.

    Only names RESULT_NAME matches are taken (others, such as a temporary file, are left); each must
    be a regular file with one link (no symlink, no second name for the same bytes), and their sizes
    (st_size: a sparse file counts all of it) together at most max_bytes. A folder with more than
    max_files entries, of any name, is refused without looking further.
    """
    taken, total = [], 0
    with os.scandir(dir_fd) as entries:
        for count, entry in enumerate(entries, 1):
            if count > max_files:
                return [], _refusal("too_many", limit=max_files)
            if not RESULT_NAME.fullmatch(entry.name):
                continue
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                return [], _refusal("not_file", name=entry.name)
            if info.st_nlink != 1:
                return [], _refusal("links", name=entry.name, links=info.st_nlink)
            total += info.st_size
            if total > max_bytes:
                return [], _refusal("too_big", name=entry.name, size=total, limit=max_bytes)
            taken.append((entry.name, info.st_size))
    return sorted(taken), None


def _refusal(reason, name="", size=0, links=0, limit=0):
    return {"reason": reason, "name": name, "size": size, "links": links, "limit": limit}
