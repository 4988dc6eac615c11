"""English-Chinese sentence pairs: load, download, split, encode and batch.

The data is the Tatoeba/Anki export `English<TAB>Chinese<TAB>attribution`, one
pair per line (the development copy is ../shared/data/tatoeba-cmn-eng.tsv; it
is never committed). Tokenisers and the vocabulary live in course.translation.vocab.
"""

import io
import os
import random
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .subword import SubwordVocab
from .vocab import BOS_ID, EOS_ID, PAD_ID, Vocab, tokenize_en, tokenize_zh

CMN_ENG_URL = "https://www.manythings.org/anki/cmn-eng.zip"
ARCHIVE_MEMBER = "cmn.txt"


@dataclass(frozen=True)
class Pair:
    en: str  # English sentence, as in the file
    zh: str  # Chinese sentence, as in the file
    attribution: str  # licence and Tatoeba sentence numbers; keep with derived copies
    line_no: int  # 1-based line in the source file


@dataclass
class LoadReport:
    pairs: list  # Pair objects, in file order
    skipped: list = field(default_factory=list)  # (line_no, reason) of malformed lines
    blank_lines: int = 0  # empty or whitespace-only lines (ignored)
    path: str = ""

    def summary(self):
        """One line for logs: counts and the first few skipped line numbers."""
        text = f"{len(self.pairs)} pairs from {self.path or 'input'}"
        if self.blank_lines:
            text += f", {self.blank_lines} blank lines ignored"
        if self.skipped:
            shown = ", ".join(str(n) for n, _ in self.skipped[:10])
            more = " ..." if len(self.skipped) > 10 else ""
            text += f", {len(self.skipped)} malformed lines skipped (lines {shown}{more})"
        return text


def parse_lines(lines, path=""):
    """Parse Tatoeba TSV lines into a LoadReport (tolerant; bad lines are counted)."""
    report = LoadReport(pairs=[], path=str(path))
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if line_no == 1:
            line = line.lstrip("\ufeff")  # UTF-8 byte-order mark
        if not line.strip():
            report.blank_lines += 1
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            report.skipped.append((line_no, f"expected 2 or 3 tab-separated fields, got {len(fields)}"))
            continue
        en, zh = fields[0].strip(), fields[1].strip()
        if not en or not zh:
            report.skipped.append((line_no, "empty English or Chinese field"))
            continue
        attribution = fields[2].strip() if len(fields) == 3 else ""
        report.pairs.append(Pair(en, zh, attribution, line_no))
    return report


def load_pairs(path):
    """Read a Tatoeba/Anki TSV file (BOM, blank and malformed lines tolerated)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no data file at {path}; pass --data PATH to the Tatoeba cmn-eng TSV "
            "(or fetch it with course.translation.data.download(dest))"
        )
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return parse_lines(f, path)


def download(dest, url=CMN_ENG_URL, timeout=60):
    """Fetch the cmn-eng zip archive from url and write its cmn.txt to dest (a file path)."""
    dest = Path(dest)
    request = urllib.request.Request(url, headers={"User-Agent": "attention-lab/1.0"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read()
    except OSError as err:
        raise RuntimeError(f"could not download {url}: {err}; check the address or your connection") from err
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            names = archive.namelist()
            member = next((n for n in names if Path(n).name == ARCHIVE_MEMBER), None)
            if member is None:
                raise RuntimeError(f"{url} has no {ARCHIVE_MEMBER} (it holds {names})")
            data = archive.read(member)
    except zipfile.BadZipFile as err:
        raise RuntimeError(f"{url} did not return a zip archive: {err}") from err
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dest


@dataclass
class Splits:
    train: list  # Pair objects
    valid: list
    test: list
    long: list = field(default_factory=list)  # extra held-out long sentences (BLEU by length only)


LONG_MIN_WORDS = 11  # what "a long sentence" means for the extra held-out set


def count_words(tokens):
    """Source length in words: tokens with a letter or digit (punctuation not counted)."""
    return sum(1 for tok in tokens if any(ch.isalnum() for ch in tok))


def split_pairs(pairs, test_size=1000, valid_size=500, seed=0, long_size=0, long_min_words=LONG_MIN_WORDS):
    """Seeded train/valid/test(/long) split by unique English sentence (no leakage).

    All translations of one English sentence land in the same split; test and
    valid get exactly test_size and valid_size pairs when groups allow it. A
    random test set holds few long sentences (about 4% have 11+ words), so up to
    long_size more pairs whose English has at least long_min_words words are
    held out as `long`, for measuring BLEU by length (the bottleneck) on more
    than a few dozen sentences.
    """
    groups = {}
    for pair in pairs:
        groups.setdefault(pair.en, []).append(pair)
    keys = sorted(groups)  # independent of file order
    random.Random(seed).shuffle(keys)
    total = len(pairs)
    if test_size + valid_size + long_size >= total:
        raise ValueError(
            f"test_size + valid_size = {test_size + valid_size} leaves no training pairs "
            f"out of {total}; use smaller sizes"
        )
    chosen, used = {"test": [], "valid": [], "long": []}, set()
    # Tokenising every English sentence costs time; only do it when long pairs are asked for.
    long_keys = [k for k in keys if count_words(tokenize_en(k)) >= long_min_words] if long_size > 0 else []
    for name, size, candidates in (("test", test_size, keys), ("valid", valid_size, keys),
                                   ("long", long_size, long_keys)):
        count = 0
        for key in candidates:
            if count == size:
                break
            if key in used or count + len(groups[key]) > size:
                continue
            chosen[name].append(key)
            used.add(key)
            count += len(groups[key])
    train = [p for key in keys if key not in used for p in groups[key]]
    test = [p for key in chosen["test"] for p in groups[key]]
    valid = [p for key in chosen["valid"] for p in groups[key]]
    long = [p for key in chosen["long"] for p in groups[key]]
    return Splits(train=train, valid=valid, test=test, long=long)


def tokenize_pairs(pairs):
    """Pairs -> list of (English tokens, Chinese tokens)."""
    return [(tokenize_en(p.en), tokenize_zh(p.zh)) for p in pairs]


def filter_by_length(token_pairs, max_src_len=40, max_tgt_len=40):
    """Keep pairs with 1..max_src_len source and 1..max_tgt_len target tokens."""
    return [
        (s, t) for s, t in token_pairs if 0 < len(s) <= max_src_len and 0 < len(t) <= max_tgt_len
    ]


def build_vocabs(token_pairs, src_min_freq=2, tgt_min_freq=2, src_subword=0):
    """Source and target vocabularies from training token pairs.

    src_subword > 0: the English side becomes a BPE vocabulary of that many
    pieces learned from these pairs (course.translation.subword); 0: words
    seen at least src_min_freq times.
    """
    if src_subword:
        src_vocab = SubwordVocab.train([s for s, _ in token_pairs], src_subword, min_frequency=src_min_freq)
    else:
        src_vocab = Vocab.build((s for s, _ in token_pairs), min_freq=src_min_freq)
    tgt_vocab = Vocab.build((t for _, t in token_pairs), min_freq=tgt_min_freq)
    return src_vocab, tgt_vocab


def encode_pairs(token_pairs, src_vocab, tgt_vocab):
    """Token pairs -> list of (source ids, target ids); the source words are segmented by src_vocab."""
    sources = src_vocab.segment_many([s for s, _ in token_pairs])
    return [(src_vocab.encode(s), tgt_vocab.encode(t)) for s, (_, t) in zip(sources, token_pairs)]


@dataclass
class Batch:
    src: torch.Tensor  # (B, T_src) source ids, <pad>-padded
    src_valid_lens: torch.Tensor  # (B,) real source lengths
    tgt_in: torch.Tensor  # (B, T_tgt) <bos> + target, padded (decoder input)
    tgt_out: torch.Tensor  # (B, T_tgt) target + <eos>, padded (what to predict)
    tgt_valid_lens: torch.Tensor  # (B,) target length + 1 (the <eos>)

    def to(self, device):
        """The same batch on another device."""
        return Batch(*(t.to(device, non_blocking=True) for t in self.__dict__.values()))

    @property
    def num_tokens(self):
        """Real (non-pad) source plus target tokens: what tokens/s counts."""
        return int(self.src_valid_lens.sum() + self.tgt_valid_lens.sum())


def _pad(seqs, length):
    """List of id lists -> (len(seqs), length) tensor padded with <pad>."""
    out = torch.full((len(seqs), length), PAD_ID, dtype=torch.long)
    for i, seq in enumerate(seqs):
        out[i, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out


def make_batch(examples):
    """List of (source ids, target ids) -> a padded Batch."""
    if not examples:
        raise ValueError("cannot make a batch from no examples")
    srcs = [list(s) for s, _ in examples]
    tgt_in = [[BOS_ID] + list(t) for _, t in examples]
    tgt_out = [list(t) + [EOS_ID] for _, t in examples]
    src_lens = torch.tensor([len(s) for s in srcs])  # (B,)
    tgt_lens = torch.tensor([len(t) for t in tgt_out])  # (B,)
    if int(src_lens.min()) == 0:
        raise ValueError("a source sentence has no tokens; filter empty pairs first")
    T_src, T_tgt = int(src_lens.max()), int(tgt_lens.max())
    return Batch(_pad(srcs, T_src), src_lens, _pad(tgt_in, T_tgt), _pad(tgt_out, T_tgt), tgt_lens)


def bucket_batches(examples, batch_size, seed=0, epoch=0, pool_batches=50, shuffle=True):
    """Index batches of similar lengths: shuffle, sort within pools, shuffle the batches.

    Sorting inside pools of pool_batches * batch_size examples keeps padding low
    while the seeded shuffles (one per epoch) keep batches varied.
    """
    order = list(range(len(examples)))
    rng = random.Random(seed * 100003 + epoch)
    if shuffle:
        rng.shuffle(order)
    pool = max(1, pool_batches) * batch_size
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(
            order[start : start + pool], key=lambda i: (len(examples[i][0]), len(examples[i][1]))
        )
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    if shuffle:
        rng.shuffle(batches)
    return batches


def iterate_batches(examples, batch_size, seed=0, epoch=0, shuffle=True):
    """Yield padded Batches of examples grouped by length (see bucket_batches)."""
    for idx in bucket_batches(examples, batch_size, seed, epoch, shuffle=shuffle):
        yield make_batch([examples[i] for i in idx])


def subsample(pairs, max_pairs, seed=0):
    """A seeded random subset of max_pairs pairs in file order (all pairs when None)."""
    if max_pairs is None or max_pairs >= len(pairs):
        return list(pairs)
    keep = sorted(random.Random(seed).sample(range(len(pairs)), max_pairs))
    return [pairs[i] for i in keep]


def prepare_splits(pairs, seed=0, test_size=1000, valid_size=500, max_pairs=None, long_size=0):
    """The split every command uses: optional subsample, then split_pairs."""
    return split_pairs(subsample(pairs, max_pairs, seed), test_size, valid_size, seed, long_size)
