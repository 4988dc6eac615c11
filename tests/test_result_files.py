"""The files a sandboxed job returns (grader/harness/result_file.py), read as hostile data.

A record written by the harness's writer comes back value for value (every dtype, empty and 0-d
tensors, NaN, error records); every crafted header is refused with its own message, never by an
exception; which files of a results folder are taken at all (no symlink, no hard link, all sizes
together within the budget, a bounded count) is decided before anything is copied, by the same rule
in the strict server's copy-out and in the grader.
"""

import json
import math
import os

import pytest
import torch

from grader.harness import result_file, strict
from grader.sandbox import collect
from grader.text import render
from grader.untrusted_records import read_record

MB = 2**20


def write_raw(path, header, blobs=()):
    """A result file of a crafted header and tensor bytes."""
    path.write_bytes(result_file.pack(header, list(blobs)))
    return path


def reason(record):
    """The rendered reason of a rejected record (fails when the record was not rejected)."""
    assert "error" in record and record["error"]["kind"] == "rejected", record
    return render(record["error"]["reason"])


def one_tensor(tensor_entry, blob):
    return {"record": {"ok": {"w": {"$tensor": 0}}}, "tensors": [tensor_entry]}, [blob]


def test_every_kind_of_value_comes_back_as_written(tmp_path):
    values = {"f32": torch.randn(2, 3), "f64": torch.randn(4, dtype=torch.float64),
              "f16": torch.randn(3).half(), "bf16": torch.randn(5).bfloat16(), "bool": torch.tensor([True, False]),
              "u8": torch.arange(7, dtype=torch.uint8), "i8": torch.tensor([-3, 4], dtype=torch.int8),
              "i16": torch.tensor([300], dtype=torch.int16), "i32": torch.arange(6, dtype=torch.int32).reshape(2, 3),
              "i64": torch.tensor(2**40), "empty": torch.zeros(0, 4), "strided": torch.arange(12.0).reshape(3, 4).t(),
              "number": 1.25, "int": -7, "flag": True, "none": None, "text": "a\u2028b", "nan": float("nan")}
    path = tmp_path / "0.result"
    result_file.write({"ok": values}, str(path))
    back = read_record(path, MB)["ok"]
    assert set(back) == set(values)
    for name, value in values.items():
        got = back[name]
        if isinstance(value, torch.Tensor):
            assert type(got) is torch.Tensor and got.dtype == value.dtype and torch.equal(got, value), name
        elif isinstance(value, float) and math.isnan(value):
            assert math.isnan(got)
        else:
            assert got == value and type(got) is type(value), name
    error = {"error": {"kind": "not_implemented", "type": "NotImplementedError", "message": "forward",
                       "where": {"file": "ex03_scoring.py", "line": 12, "function": "forward", "code": "raise"},
                       "traceback": "  File ..."}}
    result_file.write(error, str(path))
    assert read_record(path, MB) == error


def test_a_tensor_without_raw_bytes_is_named_by_what_it_is(tmp_path):
    path = tmp_path / "0.result"
    result_file.write({"ok": {"w": torch.empty(2, device="meta")}}, str(path))
    assert reason(read_record(path, MB)) == ("the result `w` is a meta tensor; return an ordinary dense CPU tensor "
                                             "of float, integer or bool values")
    result_file.write({"ok": {"w": torch.zeros(2, dtype=torch.complex64)}}, str(path))
    assert "is a complex64 tensor" in reason(read_record(path, MB))


@pytest.mark.parametrize("crafted, words", [
    (lambda p: p.write_bytes(b"PK\x03\x04" + b"}" * 1000), "not one the grader's harness writes"),
    (lambda p: p.write_bytes(result_file.MAGIC + (2**40).to_bytes(8, "little")), "more than the 1.0 MB the grader"),
    (lambda p: p.write_bytes(result_file.MAGIC + (100).to_bytes(8, "little") + b"{}"), "ends before its header"),
    (lambda p: p.write_bytes(result_file.MAGIC + (3).to_bytes(8, "little") + b"\xff\xfe{"), "not the harness's JSON"),
    (lambda p: write_raw(p, {"record": "[" * 5000}), "not {record, tensors}"),
    (lambda p: p.write_bytes(result_file.MAGIC + (30001).to_bytes(8, "little") + b"[" * 15000 + b"]" * 15001),
     "not the harness's JSON"),
    (lambda p: write_raw(p, {"record": {"ok": {"w": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}}, "tensors": []}),
     "nests deeper than 16 levels"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [2**62, 1], "offset": 0, "nbytes": 4},
                                        bytes(4))), "declares shape (4611686018427387904, 1) of float32"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16}, bytes(8))),
     "but the file holds 8 bytes for it"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [2], "offset": 2**62, "nbytes": 8}, bytes(8))),
     "but the file holds 0 bytes for it"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "complex128", "shape": [1], "offset": 0, "nbytes": 16},
                                        bytes(16))), "is a complex128 tensor"),
    (lambda p: write_raw(p, *one_tensor({"dtype": ["float32"], "shape": [1], "offset": 0, "nbytes": 4},
                                        bytes(4))), "is a list tensor"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [1] * 9, "offset": 0, "nbytes": 4},
                                        bytes(4))), "is a 9-d tensor"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [-1, -4], "offset": 0, "nbytes": 16},
                                        bytes(16))), "describes a tensor wrongly (`w`: shape)"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [0, 2**62, 2**62], "offset": 0, "nbytes": 0},
                                        b"")), "describes a tensor wrongly (`w`: shape)"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [0, 2**64], "offset": 0, "nbytes": 0},
                                        b"")), "describes a tensor wrongly (`w`: shape)"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "float32", "shape": [2], "offset": -4, "nbytes": 8}, bytes(8))),
     "describes a tensor wrongly (`w`: offset)"),
    (lambda p: write_raw(p, *one_tensor({"dtype": "bool", "shape": [2], "offset": 0, "nbytes": 2}, b"\x01\x07")),
     "is a bool with bytes other than 0 and 1 tensor"),
    (lambda p: write_raw(p, {"record": {"ok": {"a": {"$tensor": 0}, "b": {"$tensor": 0}}},
                             "tensors": [{"dtype": "uint8", "shape": [1], "offset": 0, "nbytes": 1}]}, [b"\0"]),
     "`: $tensor)"),
    (lambda p: write_raw(p, {"record": {"ok": {}}, "tensors": [{"dtype": "uint8", "shape": [1], "offset": 0,
                                                                "nbytes": 1}]}, [b"\0"]), "an unnamed tensor"),
    (lambda p: write_raw(p, {"record": {"ok": {"a": {"$tensor": 0}, "b": {"$tensor": 1}}},
                             "tensors": [{"dtype": "float32", "shape": [4], "offset": 0, "nbytes": 16},
                                         {"dtype": "float32", "shape": [2], "offset": 8, "nbytes": 8}]}, [bytes(16)]),
     "overlap another tensor's"),
])
def test_a_crafted_result_file_is_refused_with_its_own_message(tmp_path, crafted, words):
    path = tmp_path / "0.result"
    crafted(path)
    assert words in reason(read_record(path, 16 * MB))


def test_no_byte_changed_in_a_result_file_makes_the_reader_raise(tmp_path):
    """Every single-byte change of a real result file's header and first tensor bytes: a record or a
    rejection, never an exception out of read_record."""
    path = tmp_path / "0.result"
    record = {"ok": {"w": torch.ones(2, 3), "b": torch.tensor([True]), "n": 3, "s": "text",
                     "e": torch.zeros(0, 2)}}
    result_file.write(record, str(path))
    good = path.read_bytes()
    header_end = 16 + int.from_bytes(good[8:16], "little") + 8
    outcomes = set()
    for i in range(header_end):
        for byte in {0, 0x7B, 0x5B, 0x22, 0x31, 0xFF, good[i] ^ 1}:
            path.write_bytes(good[:i] + bytes([byte]) + good[i + 1:])
            back = read_record(path, MB)
            assert isinstance(back, dict) and set(back) in ({"ok"}, {"error"}), (i, byte, back)
            outcomes.add(next(iter(back)))
    assert outcomes == {"ok", "error"}


def test_a_header_of_many_small_containers_is_refused_before_it_is_parsed(tmp_path):
    """A header within its size of empty lists: 350,000 objects if parsed, so it is not."""
    items = (result_file.MAX_HEADER - 100) // 3
    text = json.dumps({"record": {"ok": {"w": [[]] * items}}, "tensors": []}, separators=(",", ":")).encode()
    assert len(text) <= result_file.MAX_HEADER
    path = tmp_path / "0.result"
    path.write_bytes(result_file.MAGIC + len(text).to_bytes(8, "little") + text)
    assert reason(read_record(path, MB)) == "the result holds far more entries than any check produces"
    few = json.dumps({"record": {"ok": {"w": [[]] * 100}}, "tensors": []}).encode()
    path.write_bytes(result_file.MAGIC + len(few).to_bytes(8, "little") + few)
    assert "the result `w` is a list" in reason(read_record(path, MB))


def results_folder(tmp_path, files):
    """A results folder with {name: bytes} -> its path."""
    folder = tmp_path / "results"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


def returned(folder, max_bytes=64 * MB, max_files=result_file.MAX_FILES):
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return result_file.returned(fd, max_bytes, max_files)
    finally:
        os.close(fd)


def test_only_result_names_are_taken_and_each_must_be_a_single_regular_file(tmp_path):
    folder = results_folder(tmp_path, {"0.result": b"a", "import.result": b"bc", "1.result.tmp": b"x",
                                       "evil.pt": b"y", "01.result": b"z"})
    assert returned(folder) == ([("0.result", 1), ("import.result", 2)], None)
    os.symlink("/etc/passwd", folder / "2.result")
    assert returned(folder)[1] == {"reason": "not_file", "name": "2.result", "size": 0, "links": 0, "limit": 0}
    os.remove(folder / "2.result")
    os.link(folder / "0.result", folder / "3.result")
    taken, refusal = returned(folder)
    assert taken == [] and refusal["reason"] == "links" and refusal["links"] == 2


def test_a_sparse_file_counts_all_its_size_against_the_budget(tmp_path):
    folder = results_folder(tmp_path, {})
    for i in range(5):
        with open(folder / f"{i}.result", "wb") as f:
            f.truncate(15 * MB)
    assert os.stat(folder / "0.result").st_blocks == 0  # sparse: nothing on disk
    taken, refusal = returned(folder)
    assert taken == [] and refusal["reason"] == "too_big" and refusal["size"] == 75 * MB
    assert refusal["limit"] == 64 * MB


def test_a_folder_of_too_many_entries_is_refused_without_reading_them_all(tmp_path):
    folder = results_folder(tmp_path, {f"junk{i}": b"" for i in range(40)})
    assert returned(folder, max_files=32) == ([], {"reason": "too_many", "name": "", "size": 0, "links": 0,
                                                  "limit": 32})


def test_copy_out_takes_nothing_from_a_box_with_a_sparse_file_and_its_hard_links(tmp_path):
    box, job = tmp_path / "box", tmp_path / "job"
    (box / "results").mkdir(parents=True)
    (box / "out").mkdir()
    job.mkdir()
    (box / "out" / "output.txt").write_text("printed\n" * 10_000)
    farm = box / "results" / "farm.result"
    with open(farm, "wb") as f:
        f.truncate(16 * MB - 4096)
    for i in range(255):
        os.link(farm, box / "results" / f"{i}.result")
    refusal = strict.copy_out(str(box), str(job), 64 * MB, 1024)
    assert refusal["reason"] == "links" and refusal["links"] == 256, refusal
    assert os.listdir(job / "results") == []
    assert (job / "output.txt").stat().st_size == 1024  # output.txt only up to its own bound
    (job / "status.json").write_text(json.dumps({"exit_code": 0, "elapsed_s": 1.0, "results_refused": refusal}))
    result = collect(job, 3)
    assert result.import_error is None and len(result.records) == 3
    assert reason(result.records[0]).startswith("the job's result file `")
    assert "has 256 names (hard links to the same bytes); none of its results were taken" in reason(result.records[0])


def test_copy_out_copies_a_legitimate_box_and_the_grader_reads_it(tmp_path):
    box, job = tmp_path / "box", tmp_path / "job"
    (box / "results").mkdir(parents=True)
    job.mkdir()
    result_file.write({"ok": {"w": torch.arange(6.0).reshape(2, 3)}}, str(box / "results" / "0.result"))
    result_file.write({"error": {"kind": "exception", "type": "E", "message": "m", "where": None, "traceback": ""}},
                      str(box / "results" / "1.result"))
    (box / "results" / "1.result.tmp").write_bytes(b"half")
    assert strict.copy_out(str(box), str(job), 64 * MB, 1024) is None
    assert sorted(os.listdir(job / "results")) == ["0.result", "1.result"]
    (job / "status.json").write_text(json.dumps({"exit_code": 0, "elapsed_s": 1.0}))
    result = collect(job, 3)
    assert torch.equal(result.records[0]["ok"]["w"], torch.arange(6.0).reshape(2, 3))
    assert result.records[1]["error"]["type"] == "E" and result.records[2] is None


def test_the_grader_refuses_a_process_mode_results_folder_by_the_same_rule(tmp_path):
    job = tmp_path / "job"
    results = job / "results"
    results.mkdir(parents=True)
    (job / "status.json").write_text(json.dumps({"exit_code": 0, "elapsed_s": 1.0}))
    with open(results / "0.result", "wb") as f:
        f.truncate(40 * MB)
    with open(results / "1.result", "wb") as f:
        f.truncate(40 * MB)
    result = collect(job, 2, max_bytes=64 * MB)
    assert "together are 80.0 MB (counting `" in reason(result.records[0])
    assert "more than the 64.0 MB a job may return" in reason(result.records[1])
