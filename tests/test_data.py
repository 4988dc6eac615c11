"""Data pipeline: loader, download, tokenisers, vocabulary, splits, batching."""

import http.server
import io
import threading
import zipfile
from pathlib import Path

import pytest
import torch

from course.translation import data as D
from course.translation.vocab import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    SPECIALS,
    UNK_ID,
    Vocab,
    detokenize_zh,
    tokenize_en,
    tokenize_zh,
)

REAL_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "tatoeba-cmn-eng.tsv"
ATTR = "CC-BY 2.0 (France) Attribution: tatoeba.org #1 (a) & #2 (b)"


def write_tsv(path, lines, bom=True):
    """Write lines joined by newlines, optionally behind a UTF-8 BOM."""
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + "\n".join(lines).encode("utf-8") + b"\n")
    return path


def make_pairs(n_english, translations=lambda i: 1 + i % 3):
    """Synthetic pairs: English sentence i has translations(i) Chinese versions."""
    pairs, line = [], 1
    for i in range(n_english):
        for k in range(translations(i)):
            pairs.append(D.Pair(f"sentence {i}.", f"句{i}版{k}。", ATTR, line))
            line += 1
    return pairs


# ---------------------------------------------------------------- loader

def test_loader_handles_bom_blank_malformed_and_keeps_attribution(tmp_path):
    lines = [
        f"Hi.\t嗨。\t{ATTR}",  # line 1, behind the BOM
        "",  # 2 blank
        "only one field",  # 3 malformed
        f"Run.\t你用跑的。\t{ATTR}",  # 4
        "   ",  # 5 blank (spaces)
        "a\tb\tc\td",  # 6 malformed: four fields
        "Wait!\t\tattr",  # 7 malformed: empty Chinese
        "Stop!\t住手！",  # 8 two fields: accepted, empty attribution
    ]
    report = D.load_pairs(write_tsv(tmp_path / "pairs.tsv", lines))
    assert [p.en for p in report.pairs] == ["Hi.", "Run.", "Stop!"]
    assert [p.zh for p in report.pairs] == ["嗨。", "你用跑的。", "住手！"]
    assert [p.line_no for p in report.pairs] == [1, 4, 8]
    assert report.pairs[0].attribution == ATTR and report.pairs[2].attribution == ""
    assert [n for n, _ in report.skipped] == [3, 6, 7]
    assert "got 1" in report.skipped[0][1] and "got 4" in report.skipped[1][1]
    assert report.blank_lines == 2 and len(report.pairs) + len(report.skipped) + report.blank_lines == 8
    assert "lines 3, 6, 7" in report.summary()


def test_loader_without_bom_and_with_crlf(tmp_path):
    path = tmp_path / "crlf.tsv"
    path.write_bytes(f"Hi.\t嗨。\t{ATTR}\r\nGo.\t去。\t{ATTR}\r\n".encode("utf-8"))
    report = D.load_pairs(path)
    assert [(p.en, p.zh, p.attribution) for p in report.pairs] == [("Hi.", "嗨。", ATTR), ("Go.", "去。", ATTR)]
    assert report.skipped == []


def test_loader_missing_file_says_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match="--data"):
        D.load_pairs(tmp_path / "nope.tsv")


# ---------------------------------------------------------------- download

class _ZipHandler(http.server.BaseHTTPRequestHandler):
    payload = b""

    def do_GET(self):  # http.server's naming
        if self.path != "/cmn-eng.zip":
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/zip")
        self.send_header("Content-Length", str(len(self.payload)))
        self.end_headers()
        self.wfile.write(self.payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def zip_server():
    """A local HTTP server on a random port serving a zip built here."""
    content = "\ufeff" + f"Hi.\t嗨。\t{ATTR}\nRun.\t你用跑的。\t{ATTR}\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("_about.txt", "about")
        archive.writestr("cmn.txt", content.encode("utf-8"))
    handler = type("Handler", (_ZipHandler,), {"payload": buffer.getvalue()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", content
    server.shutdown()
    server.server_close()


def test_download_extracts_cmn_txt(tmp_path, zip_server):
    base, content = zip_server
    dest = D.download(tmp_path / "data" / "cmn.txt", url=base + "/cmn-eng.zip", timeout=10)
    assert dest.read_text(encoding="utf-8") == content
    assert [p.en for p in D.load_pairs(dest).pairs] == ["Hi.", "Run."]
    assert D.CMN_ENG_URL.startswith("https://www.manythings.org/") and D.CMN_ENG_URL.endswith("cmn-eng.zip")


def test_download_bad_address_is_a_clear_error(tmp_path, zip_server):
    base, _ = zip_server
    with pytest.raises(RuntimeError, match="could not download"):
        D.download(tmp_path / "cmn.txt", url=base + "/missing.zip", timeout=10)
    assert not (tmp_path / "cmn.txt").exists()


# ---------------------------------------------------------------- tokenisers and vocabulary

def test_tokenize_en_lowercases_and_splits_punctuation():
    assert tokenize_en("Don't do that, Tom!") == ["don't", "do", "that", ",", "tom", "!"]
    assert tokenize_en("It\u2019s 5 o'clock.") == ["it's", "5", "o'clock", "."]
    assert tokenize_en('"Why?" she asked.') == ['"', "why", "?", '"', "she", "asked", "."]
    assert tokenize_en("  ") == []


def test_tokenize_zh_by_character_without_spaces():
    assert tokenize_zh("我 爱 Tom。") == ["我", "爱", "T", "o", "m", "。"]
    assert detokenize_zh(tokenize_zh("他有3只猫。")) == "他有3只猫。"
    assert tokenize_zh("你好吗?好!") == list("你好吗？好！")  # one form of each punctuation mark


def test_vocab_min_freq_specials_unk_and_list_round_trip():
    sents = [["a", "b", "a"], ["a", "c", "b"], ["d"]]  # counts a3 b2 c1 d1
    vocab = Vocab.build(sents, min_freq=2)
    assert vocab.itos[:4] == list(SPECIALS)
    assert (vocab.stoi["<pad>"], vocab.stoi["<bos>"], vocab.stoi["<eos>"], vocab.stoi["<unk>"]) == (
        PAD_ID, BOS_ID, EOS_ID, UNK_ID) == (0, 1, 2, 3)
    assert vocab.itos[4:] == ["a", "b"] and len(vocab) == 6
    assert vocab.encode(["b", "c", "a"]) == [5, UNK_ID, 4]
    assert vocab.decode([BOS_ID, 4, 5, PAD_ID, EOS_ID, 4]) == ["a", "b"]
    again = Vocab.from_list(vocab.to_list())
    assert again.itos == vocab.itos and again.stoi == vocab.stoi
    assert Vocab.build(sents, min_freq=1).itos[4:] == ["a", "b", "c", "d"]  # ties broken by token
    with pytest.raises(ValueError, match="start with"):
        Vocab.from_list(["a", "<pad>", "<bos>", "<eos>", "<unk>"])
    with pytest.raises(ValueError, match="min_freq"):
        Vocab.build(sents, min_freq=0)


# ---------------------------------------------------------------- splits and filtering

def test_split_is_deterministic_exact_and_leak_free():
    pairs = make_pairs(400)  # 1 + i % 3 translations: 799 pairs
    a = D.split_pairs(pairs, test_size=100, valid_size=50, seed=3)
    b = D.split_pairs(list(reversed(pairs)), test_size=100, valid_size=50, seed=3)
    c = D.split_pairs(pairs, test_size=100, valid_size=50, seed=4)
    assert len(a.test) == 100 and len(a.valid) == 50 and len(a.train) == len(pairs) - 150
    assert {p.line_no for p in a.test} == {p.line_no for p in b.test}  # file order does not matter
    assert {p.line_no for p in a.test} != {p.line_no for p in c.test}  # the seed does
    en = {name: {p.en for p in getattr(a, name)} for name in ("train", "valid", "test")}
    assert not (en["train"] & en["test"]) and not (en["train"] & en["valid"]) and not (en["valid"] & en["test"])
    assert sorted(p.line_no for s in (a.train, a.valid, a.test) for p in s) == [p.line_no for p in pairs]


def test_split_keeps_all_translations_together_and_rejects_impossible_sizes():
    pairs = make_pairs(60, translations=lambda i: 3)
    s = D.split_pairs(pairs, test_size=30, valid_size=9, seed=0)
    counts = {}
    for p in s.test:
        counts[p.en] = counts.get(p.en, 0) + 1
    assert set(counts.values()) == {3} and len(s.test) == 30 - 30 % 3
    with pytest.raises(ValueError, match="no training pairs"):
        D.split_pairs(pairs, test_size=150, valid_size=50)


def test_split_holds_out_extra_long_sentences_without_leakage():
    short = make_pairs(300)
    long = [D.Pair(f"we all saw the {i} tall old trees near the river bank in town today.", f"长句{i}。", "",
                   10_000 + i)
            for i in range(80)]
    plain = D.split_pairs(short + long, test_size=100, valid_size=50, seed=1)
    s = D.split_pairs(short + long, test_size=100, valid_size=50, seed=1, long_size=40)
    assert {p.line_no for p in s.test} == {p.line_no for p in plain.test}  # the test set does not move
    assert len(s.long) == 40 and all(D.count_words(tokenize_en(p.en)) >= D.LONG_MIN_WORDS for p in s.long)
    en = {name: {p.en for p in getattr(s, name)} for name in ("train", "valid", "test", "long")}
    assert not (en["long"] & (en["train"] | en["valid"] | en["test"]))
    assert len(s.train) == len(plain.train) - 40


def test_filter_by_length_and_subsample():
    tok = [(["a"] * n, ["字"] * m) for n, m in [(1, 1), (5, 3), (6, 2), (2, 7), (0, 1)]]
    assert D.filter_by_length(tok, max_src_len=5, max_tgt_len=5) == [tok[0], tok[1]]
    pairs = make_pairs(50)
    sub = D.subsample(pairs, 20, seed=1)
    assert len(sub) == 20 and sub == D.subsample(pairs, 20, seed=1)
    assert [p.line_no for p in sub] == sorted(p.line_no for p in sub)


# ---------------------------------------------------------------- batches

def test_make_batch_pads_and_adds_bos_eos():
    batch = D.make_batch([([4, 5, 6], [7, 8]), ([9], [10, 11, 12, 13])])
    assert batch.src.tolist() == [[4, 5, 6], [9, PAD_ID, PAD_ID]]
    assert batch.src_valid_lens.tolist() == [3, 1]
    assert batch.tgt_in.tolist() == [[BOS_ID, 7, 8, PAD_ID, PAD_ID], [BOS_ID, 10, 11, 12, 13]]
    assert batch.tgt_out.tolist() == [[7, 8, EOS_ID, PAD_ID, PAD_ID], [10, 11, 12, 13, EOS_ID]]
    assert batch.tgt_valid_lens.tolist() == [3, 5]
    assert batch.num_tokens == 3 + 1 + 3 + 5
    assert batch.src.dtype == torch.long
    with pytest.raises(ValueError, match="no tokens"):
        D.make_batch([([], [1])])


def test_bucket_batches_cover_everything_once_with_less_padding():
    gen = torch.Generator().manual_seed(0)
    lengths = torch.randint(1, 30, (500,), generator=gen).tolist()
    examples = [([4] * n, [5] * n) for n in lengths]
    batches = D.bucket_batches(examples, 16, seed=0, epoch=0)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert all(len(b) <= 16 for b in batches)
    assert batches == D.bucket_batches(examples, 16, seed=0, epoch=0)
    assert batches != D.bucket_batches(examples, 16, seed=0, epoch=1)

    def padding(bs):
        return sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in bs)

    unsorted = [list(range(i, min(i + 16, 500))) for i in range(0, 500, 16)]
    assert padding(batches) < padding(unsorted) / 3
    first = next(D.iterate_batches(examples, 16, seed=0, epoch=0))
    assert first.src.shape[0] == len(batches[0])


# ---------------------------------------------------------------- the real file

@pytest.mark.skipif(not REAL_DATA.is_file(), reason="development data ../shared/data is absent")
def test_real_tatoeba_file_loads_and_splits():
    report = D.load_pairs(REAL_DATA)
    assert len(report.pairs) + len(report.skipped) + report.blank_lines == 29156  # every line accounted for
    assert report.pairs[0].en == "Hi." and not report.pairs[0].en.startswith("\ufeff")
    assert all(p.attribution.startswith("CC-BY") for p in report.pairs[:100])
    splits = D.prepare_splits(report.pairs, seed=0)
    assert len(splits.test) == 1000
    assert not {p.en for p in splits.test} & {p.en for p in splits.train}


@pytest.mark.skipif(not REAL_DATA.is_file(), reason="the Tatoeba data is not here")
def test_no_example_sentence_is_in_the_data_verbatim():
    """demos.py says so: the Translate page's examples are not sentences the models were trained on."""
    from course.translation import demos

    english = {p.en.strip().lower() for p in D.load_pairs(REAL_DATA).pairs}
    assert [s for s in demos.EXAMPLE_SENTENCES if s in english] == []
