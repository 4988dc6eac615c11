"""Reading a sandbox's result files as hostile data: the file's size, its header, its tensors' bytes, the record.

A result file is what the learner's process left (harness/result_file.py: a JSON header and raw
tensor bytes); every byte of it may be crafted. Nothing in it is interpreted: `read_record` checks
the file's size, the magic, the header's length (at most result_file.MAX_HEADER), its brackets (at
most MAX_CONTAINERS, so that parsing it builds little) and its JSON (nesting at most MAX_DEPTH),
then every tensor it declares (a known dtype, at most MAX_DIMS dimensions, exactly as many bytes as
its shape needs, within the file, overlapping no other, standing in exactly one place of the record,
bool bytes 0 or 1) before copying those bytes into a fresh tensor. Then it checks the structure of
the record (one of `{"ok": {name: value}}` or `{"error": {...}}`). Strings are capped. Whatever
fails becomes an error record of kind "rejected" whose reason the report shows. The grader's memory
for one file is bounded by a few times its size.
"""

import json
import os
import stat

import torch

from .harness import result_file
from .text import msg

MAX_STRING = 2000  # characters of any one string that came from the sandbox
MAX_KEYS = 4096  # result names in one record
MAX_INT = 2**63
ERROR_KINDS = {"exception", "not_implemented", "exit", "memory"}
_HEAD = len(result_file.MAGIC) + 8  # the magic and the header's length


class Rejected(Exception):
    """A result that is not safe or not of the expected form; args[0] is a msg() reason."""


class Unwritable:
    """A tensor the harness could not write as raw bytes (a meta or sparse tensor, ...): `what` it was."""

    def __init__(self, what):
        self.what = what


def rejected(reason):
    """The error record that stands for a rejected result."""
    return {"error": {"kind": "rejected", "type": "", "message": "", "reason": reason, "where": None,
                      "traceback": ""}}


def refused(refusal):
    """The msg() reason for a results folder that result_file.returned refused (its refusal dict, from a
    strict job's status.json or from the grader's own check), or None when it is no such dict."""
    reason = refusal.get("reason") if isinstance(refusal, dict) else None
    if reason not in ("too_many", "not_file", "links", "too_big"):
        return None

    def number(key):
        value = refusal.get(key)
        return value if type(value) is int and 0 <= value < MAX_INT else 0

    name = refusal.get("name")
    return msg(f"result.refused_{reason}", name=name if isinstance(name, str) and result_file.RESULT_NAME.fullmatch(name)
               else "?", links=number("links"), size=_mb(number("size")),
               limit=number("limit") if reason == "too_many" else _mb(number("limit")))


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


def read_record(path, max_bytes):
    """One result file -> a checked record (strings capped, tensors fresh), or a rejected record."""
    try:
        return check_record(decode(_read_bytes(path, max_bytes)))
    except Rejected as err:
        return rejected(err.args[0])


def decode(data):
    """A result file's bytes -> its record, each tensor a fresh torch.Tensor (Rejected saying what is wrong)."""
    if len(data) < _HEAD or not data.startswith(result_file.MAGIC):
        raise Rejected(msg("result.not_result_file"))
    length = int.from_bytes(data[len(result_file.MAGIC):_HEAD], "little")
    if length > result_file.MAX_HEADER:
        raise Rejected(msg("result.header_too_big", size=_mb(length), limit=_mb(result_file.MAX_HEADER)))
    if _HEAD + length > len(data):
        raise Rejected(msg("result.truncated"))
    text = data[_HEAD:_HEAD + length]
    if text.count(b"{") + text.count(b"[") > result_file.MAX_CONTAINERS:  # bounds what parsing builds
        raise Rejected(msg("result.too_many"))
    try:
        header = json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        raise Rejected(msg("result.bad_header", error=cap(f"{type(err).__name__}: {err}", 200))) from None
    if not isinstance(header, dict) or set(header) != {"record", "tensors"} or not isinstance(header["tensors"], list):
        raise Rejected(msg("result.bad_header", error="not {record, tensors}"))
    table = header["tensors"]
    if len(table) > result_file.MAX_TENSORS:
        raise Rejected(msg("result.too_many"))
    body = memoryview(data)[_HEAD + length:]
    named, slots = _places(header, len(table))
    if len(named) != len(table):
        raise Rejected(msg("result.bad_tensor_entry", name="", what="an unnamed tensor"))
    spans = sorted((_span(table[i], len(body), named[i]), i) for i in named)
    spans = [span for span in spans if span[0][0] < span[0][1]]  # an empty tensor has no bytes to share
    for ((start, _), _), ((_, end), i) in zip(spans[1:], spans):
        if start < end:
            raise Rejected(msg("result.tensor_overlap", name=named[i]))
    tensors = {i: _tensor(table[i], body, named[i]) for i in named}
    for holder, key, index in slots:
        holder[key] = tensors[index]
    return header["record"]


def _places(header, count):
    """Walk the header's record (without recursion, at most MAX_DEPTH deep), putting an Unwritable where
    the harness wrote one -> ({tensor index: the result name that holds it}, [(container, key, index)]
    where the tensors go). Each of the `count` tensors may stand in one place only."""
    named, slots = {}, []
    stack = [(header, "record", 1, "")]  # (container, key, depth of the value, result name)
    while stack:
        holder, key, depth, name = stack.pop()
        value = holder[key]
        if isinstance(value, dict) and len(value) == 1 and "$tensor" in value:
            index = value["$tensor"]
            if type(index) is not int or not 0 <= index < count or index in named:
                raise Rejected(msg("result.bad_tensor_entry", name=name, what="$tensor"))
            named[index] = name
            slots.append((holder, key, index))
        elif isinstance(value, dict) and len(value) == 1 and "$unwritable" in value:
            holder[key] = Unwritable(_text(value["$unwritable"], 40) or "?")
        elif isinstance(value, (dict, list)):
            if depth > result_file.MAX_DEPTH:
                raise Rejected(msg("result.too_deep", limit=result_file.MAX_DEPTH))
            keys = value if isinstance(value, dict) else range(len(value))
            stack.extend((value, k, depth + 1, k if depth < 3 and isinstance(value, dict) else name) for k in keys
                         if isinstance(value[k], (dict, list)))
    return named, slots


def _span(entry, body_size, name):
    """(first byte, end) of one declared tensor in the data after the header, checked: a known dtype,
    at most MAX_DIMS sizes, exactly the bytes its shape needs, inside the file."""
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "offset", "nbytes"}:
        raise Rejected(msg("result.bad_tensor_entry", name=name, what=_kind(entry)))
    dtype, shape, offset, nbytes = entry["dtype"], entry["shape"], entry["offset"], entry["nbytes"]
    if not isinstance(dtype, str) or dtype not in result_file.DTYPES:
        raise Rejected(msg("result.bad_tensor", name=name, what=_text(dtype, 40) or _kind(dtype)))
    if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape):
        raise Rejected(msg("result.bad_tensor_entry", name=name, what="shape"))
    if len(shape) > result_file.MAX_DIMS:
        raise Rejected(msg("result.bad_tensor", name=name, what=f"{len(shape)}-d"))
    if type(offset) is not int or type(nbytes) is not int or offset < 0 or nbytes < 0:
        raise Rejected(msg("result.bad_tensor_entry", name=name, what="offset"))
    numel = 1
    for size in shape:
        numel *= size
    need = numel * result_file.DTYPES[dtype]
    if need != nbytes or offset + nbytes > body_size:
        raise Rejected(msg("result.tensor_bytes", name=name, shape=str(tuple(shape)), dtype=dtype, need=need,
                           have=max(0, min(nbytes, body_size - offset))))
    if any(size > result_file.MAX_SIZE for size in shape):  # an empty tensor with a huge dimension
        raise Rejected(msg("result.bad_tensor_entry", name=name, what="shape"))
    return offset, offset + nbytes


def _tensor(entry, body, name):
    """A fresh tensor holding a copy of one declared tensor's bytes (bool bytes must be 0 or 1)."""
    dtype, shape = getattr(torch, entry["dtype"]), entry["shape"]
    try:
        if not entry["nbytes"]:
            return torch.empty(shape, dtype=dtype)
        raw = bytearray(body[entry["offset"]:entry["offset"] + entry["nbytes"]])
        if dtype is torch.bool and raw.translate(None, b"\0\1"):
            raise Rejected(msg("result.bad_tensor", name=name, what="bool with bytes other than 0 and 1"))
        return torch.frombuffer(raw, dtype=dtype).reshape(shape)
    except (RuntimeError, TypeError, ValueError) as err:  # torch's own refusal of a shape _span let through
        raise Rejected(msg("result.bad_tensor_entry", name=name, what=cap(str(err), 100))) from None


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
    """A result value: a tensor (decode made it fresh and plain), a capped string, a bounded number, a bool
    or None."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, Unwritable):
        raise Rejected(msg("result.bad_tensor", name=key, what=value.what))
    if value is None or isinstance(value, (bool, float)):
        return value
    if isinstance(value, int):
        if abs(value) >= MAX_INT:
            raise Rejected(msg("result.huge_int", name=key))
        return value
    if isinstance(value, str):
        return cap(value)
    raise Rejected(msg("result.structure", name=key, what=_kind(value)))


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
