"""Reading a sandbox's result files as hostile data: sizes first, then torch.load, then the shape of it.

A result file is what the learner's process left: its bytes, its zip entries
and what they unpickle to may all be crafted. `read_record` checks the file's
size and every zip entry (stored, not compressed; within the job's size) before
`torch.load(weights_only=True)`, then checks the structure of the record (one
of `{"ok": {name: value}}` or `{"error": {...}}`) and every tensor in it (a
plain dense CPU tensor whose storage holds all its elements: no stride 0, no
overlap, no meta or sparse layout). Strings are capped. Whatever fails becomes
an error record of kind "rejected" whose reason the report shows.
"""

import io
import os
import stat
import zipfile

import torch

from .text import msg

MAX_STRING = 2000  # characters of any one string that came from the sandbox
MAX_KEYS = 4096  # result names in one record
MAX_DIMS = 8
MAX_INT = 2**63
DTYPES = {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.bool, torch.uint8,
          torch.int8, torch.int16, torch.int32, torch.int64}
ERROR_KINDS = {"exception", "not_implemented", "exit", "memory"}


class Rejected(Exception):
    """A result that is not safe or not of the expected form; args[0] is a msg() reason."""


def rejected(reason):
    """The error record that stands for a rejected result."""
    return {"error": {"kind": "rejected", "type": "", "message": "", "reason": reason, "where": None,
                      "traceback": ""}}


def cap(text, limit=MAX_STRING):
    """text cut to `limit` characters, saying how many more there were (no language needed: a count)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} ... {len(text) - limit} more characters"


def _read_bytes(path, max_bytes):
    """The bytes of a regular file (no symlink, FIFO or device) of at most max_bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as err:
        raise Rejected(msg("result.unopenable", error=err.strerror or type(err).__name__)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Rejected(msg("result.not_file"))
        if info.st_size > max_bytes:
            raise Rejected(msg("result.too_big", size=_mb(info.st_size), limit=_mb(max_bytes)))
        data = os.read(fd, max_bytes + 1)
        if len(data) > max_bytes:
            raise Rejected(msg("result.too_big", size=_mb(len(data)), limit=_mb(max_bytes)))
        return data
    finally:
        os.close(fd)


def _mb(size):
    return f"{size / 2**20:.1f}"


def check_archive(data, max_bytes):
    """Refuse a torch.save archive with compressed entries or entries larger than max_bytes in all."""
    try:
        entries = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise Rejected(msg("result.not_archive")) from None
    if len(entries) > MAX_KEYS + 16:
        raise Rejected(msg("result.too_many"))
    total = 0
    for entry in entries:
        if entry.compress_type != zipfile.ZIP_STORED or entry.compress_size != entry.file_size:
            raise Rejected(msg("result.compressed", name=cap(entry.filename, 80)))
        total += entry.file_size
        if total > max_bytes:
            raise Rejected(msg("result.too_big", size=_mb(total), limit=_mb(max_bytes)))


def read_record(path, max_bytes):
    """One result file -> a checked record (strings capped, tensors plain), or a rejected record."""
    try:
        data = _read_bytes(path, max_bytes)
        check_archive(data, max_bytes)
        try:
            obj = torch.load(io.BytesIO(data), weights_only=True)
        except Exception as err:
            raise Rejected(msg("result.unloadable", error=cap(f"{type(err).__name__}: {err}", 300))) from None
        return check_record(obj)
    except Rejected as err:
        return rejected(err.args[0])


def check_record(obj):
    """The record in its expected form, or Rejected saying what is wrong with it."""
    if not isinstance(obj, dict) or len(obj) != 1 or not ({"ok", "error"} & set(obj)):
        raise Rejected(msg("result.record", what=_kind(obj)))
    if "error" in obj:
        return {"error": check_error(obj["error"])}
    values = obj["ok"]
    if not isinstance(values, dict):
        raise Rejected(msg("result.record", what=_kind(values)))
    if len(values) > MAX_KEYS:
        raise Rejected(msg("result.too_many"))
    checked = {}
    for key, value in values.items():
        if not isinstance(key, str) or len(key) > 200:
            raise Rejected(msg("result.record", what=_kind(key)))
        checked[key] = check_value(key, value)
    return {"ok": checked}


def check_value(key, value):
    """A result value: a checked tensor, a capped string, a bounded number, a bool or None."""
    if isinstance(value, torch.Tensor):
        return check_tensor(key, value)
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        if abs(value) >= MAX_INT:
            raise Rejected(msg("result.huge_int", name=key))
        return value
    if isinstance(value, str):
        return cap(value)
    raise Rejected(msg("result.structure", name=key, what=_kind(value)))


def check_tensor(key, t):
    """A plain dense CPU tensor of a known dtype whose storage holds every element, made contiguous."""
    if type(t) is not torch.Tensor:
        raise Rejected(msg("result.structure", name=key, what=type(t).__name__))
    if t.is_meta or t.device.type != "cpu":
        raise Rejected(msg("result.bad_tensor", name=key, what=t.device.type))
    if t.layout != torch.strided or t.is_quantized or getattr(t, "is_nested", False):
        raise Rejected(msg("result.bad_tensor", name=key, what=str(t.layout).replace("torch.", "")))
    if t.dtype not in DTYPES:
        raise Rejected(msg("result.bad_tensor", name=key, what=str(t.dtype).replace("torch.", "")))
    if t.dim() > MAX_DIMS:
        raise Rejected(msg("result.bad_tensor", name=key, what=f"{t.dim()}-d"))
    shape, strides = tuple(t.shape), t.stride()
    if any(size > 1 and step <= 0 for size, step in zip(shape, strides)):
        raise Rejected(msg("result.overlapping", name=key, shape=str(shape), strides=str(strides)))
    numel = 1
    for size in shape:
        numel *= size
    if numel:
        itemsize = t.element_size()
        span = t.storage_offset() + sum((size - 1) * step for size, step in zip(shape, strides)) + 1
        if numel * itemsize > t.untyped_storage().nbytes() or span * itemsize > t.untyped_storage().nbytes():
            raise Rejected(msg("result.overlapping", name=key, shape=str(shape), strides=str(strides)))
    return t.detach().contiguous()


def check_error(error):
    """An error record's fields as plain capped strings (an unknown kind counts as an exception)."""
    if not isinstance(error, dict):
        raise Rejected(msg("result.record", what=_kind(error)))
    where = error.get("where")
    if isinstance(where, dict):
        line = where.get("line")
        where = {"file": _text(where.get("file"), 200), "line": line if isinstance(line, int) and 0 <= line < MAX_INT
                 else None, "function": _text(where.get("function"), 200) or None,
                 "code": _text(where.get("code"), 500)}
    else:
        where = None
    kind = error.get("kind")
    return {"kind": kind if kind in ERROR_KINDS else "exception", "type": _text(error.get("type"), 100) or "Error",
            "message": _text(error.get("message"), MAX_STRING), "where": where,
            "traceback": _text(error.get("traceback"), 4000)}


def _text(value, limit):
    """A string field, capped; anything else becomes ''."""
    return cap(value, limit) if isinstance(value, str) else ""


def _kind(value):
    """What a value is, for messages."""
    return type(value).__name__
