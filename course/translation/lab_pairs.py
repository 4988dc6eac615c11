"""The training lab's fourth task: a small slice of the Tatoeba pairs as plain id lists.

The lab (course.lessons.training_lab) does not read the data itself: this module
picks the slice, tokenises it with the translators' tokenisers and writes plain
JSON (`python -m course.translation.lab_pairs --data TSV --out FILE`), which the
lab reads with `--pairs FILE`. The slice is never shipped; it is made from the
development data at run time.

Slice rule: in file order, the pairs with at most MAX_EN English tokens and at
most MAX_ZH Chinese characters; the first NUM_PAIRS of them; every TEST_EVERY-th
is held out as the test set. One vocabulary holds both sides (English words and
Chinese characters, from the training pairs only), after the ids <pad> 0, <end> 1
and <unk> 2.
"""

import argparse
import json
from collections import Counter
from pathlib import Path

from course.common.paths import PROJECT_ROOT, atomic_write_text

from .data import load_pairs
from .vocab import tokenize_en, tokenize_zh

DATA = PROJECT_ROOT.parent / "shared" / "data" / "tatoeba-cmn-eng.tsv"  # the development copy, never committed
MAX_EN, MAX_ZH = 6, 7  # tokens per side; the lab pads both to its seq_len (8): 7 characters and <end>
NUM_PAIRS, TEST_EVERY = 1100, 11  # 1,000 training pairs and 100 held-out ones
SPECIALS = ("<pad>", "<end>", "<unk>")


def short_pairs(pairs, num=NUM_PAIRS):
    """(English tokens, Chinese characters) of the first `num` pairs short enough for the lab."""
    out = []
    for pair in pairs:
        en, zh = tokenize_en(pair.en), tokenize_zh(pair.zh)
        if 0 < len(en) <= MAX_EN and 0 < len(zh) <= MAX_ZH:
            out.append((en, zh))
            if len(out) == num:
                break
    return out


def make_slice(pairs, num=NUM_PAIRS):
    """{"tokens", "train", "test"}: the vocabulary and [source ids, target ids] lists (unpadded, no <end>)."""
    chosen = short_pairs(pairs, num)
    test = chosen[TEST_EVERY - 1::TEST_EVERY]
    train = [p for i, p in enumerate(chosen) if (i + 1) % TEST_EVERY]
    counts = Counter(tok for en, zh in train for tok in en + zh)
    tokens = list(SPECIALS) + sorted(counts, key=lambda tok: (-counts[tok], tok))
    index = {tok: i for i, tok in enumerate(tokens)}

    def ids(seq):
        return [index.get(tok, SPECIALS.index("<unk>")) for tok in seq]

    return {"tokens": tokens, "train": [[ids(en), ids(zh)] for en, zh in train],
            "test": [[ids(en), ids(zh)] for en, zh in test]}


def load_slice(path=DATA, num=NUM_PAIRS):
    """The slice of the Tatoeba file at path; FileNotFoundError (saying where the data goes) if it is absent."""
    return make_slice(load_pairs(path).pairs, num)


def main(argv=None):
    """Write the slice as JSON for `python -m course.lessons.training_lab --pairs FILE`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help=f"the Tatoeba cmn-eng TSV (default {DATA})")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    atomic_write_text(args.out, json.dumps(load_slice(args.data), ensure_ascii=False))


if __name__ == "__main__":
    main()
